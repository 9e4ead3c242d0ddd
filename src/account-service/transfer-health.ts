import { TRANSFER_RETRY_STEPS, transferBackoff, type TransferOutcome } from './transfer-check.js';

/** A cluster's transfer problem as its `Health` condition shows it. Messages never hold a credential. */
export interface TransferProblem {
  reason: 'AccountServiceUnavailable';
  message: string;
}

/** What one noted check means for the cluster's next check and its status. */
interface TransferNote {
  /** Re-check this soon (a 5xx within the backoff steps); otherwise the next check is one interval away. */
  retryInMs?: number;
  /**
   * The cluster's status is to be reported now: its `Health` turned False or back, or is still False
   * (said again at each failing check past the steps: a report from another replica's event, which
   * does not know the count, may have shown it True meanwhile).
   */
  report: boolean;
}

/**
 * The fleet's memory of failed transfer checks, per cluster: consecutive `unreachable` outcomes (5xx,
 * timeouts, network errors) are re-checked after `transferBackoff(intervalMs)` (interval/24,
 * doubling, `TRANSFER_RETRY_STEPS` steps); one more after the last step turns the cluster's `Health`
 * False (`AccountServiceUnavailable`, Degraded) until a check gets an answer again. Any other
 * outcome resets the count. Kept in the memory of the replica that leads (the one that checks);
 * a new leader, or a restarted one, derives each cluster's state again from the status last reported
 * (`restore`, before its first check of the cluster): a cluster reported Degraded stays Degraded past
 * the steps, so its recovery is reported; a count still within the steps starts afresh.
 */
export class TransferHealth {
  private readonly failures = new Map<string, number>();
  private readonly degraded = new Map<string, TransferProblem>();
  private readonly backoff: number[];
  /** Clusters whose state was derived from their reported status since this replica began checking. */
  private readonly derived = new Set<string>();

  constructor(intervalMs: number) {
    this.backoff = transferBackoff(intervalMs);
  }

  /** Records one check's outcome for `clusterId`. */
  note(clusterId: string, outcome: TransferOutcome): TransferNote {
    if (outcome.kind !== 'unreachable') {
      this.failures.delete(clusterId);
      return { report: this.degraded.delete(clusterId) };
    }
    const failures = (this.failures.get(clusterId) ?? 0) + 1;
    this.failures.set(clusterId, failures);
    if (failures <= TRANSFER_RETRY_STEPS) return { retryInMs: this.backoff[failures - 1], report: false };
    this.degraded.set(clusterId, {
      reason: 'AccountServiceUnavailable',
      message: `Degraded: ownership transfer checks failed ${failures} times in a row: ${outcome.message}`,
    });
    return { report: true };
  }

  /** True until the cluster's state was derived from its reported status (`restore`). */
  needsRestore(clusterId: string): boolean {
    return !this.derived.has(clusterId);
  }

  /**
   * Derives the cluster's state from the status last reported: `problem` is its `Health` problem
   * when that was ours (`AccountServiceUnavailable`), then counted as past the last step.
   */
  restore(clusterId: string, problem: TransferProblem | undefined): void {
    this.derived.add(clusterId);
    if (problem === undefined || this.failures.has(clusterId)) return;
    this.failures.set(clusterId, TRANSFER_RETRY_STEPS + 1);
    this.degraded.set(clusterId, problem);
  }

  /** Forgets every cluster: this replica no longer checks (the leader that does derives them again). */
  clear(): void {
    this.failures.clear();
    this.degraded.clear();
    this.derived.clear();
  }

  /** The problem to show in the cluster's `Health`, or undefined when its transfer checks are fine. */
  problem(clusterId: string): TransferProblem | undefined {
    return this.degraded.get(clusterId);
  }

  /** Drops a deleted cluster. */
  forget(clusterId: string): void {
    this.failures.delete(clusterId);
    this.degraded.delete(clusterId);
    this.derived.delete(clusterId);
  }
}
