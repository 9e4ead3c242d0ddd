import { TRANSFER_RETRY_STEPS, transferBackoff, type TransferOutcome } from './transfer-check.js';

/** A cluster's transfer problem as its `Health` condition shows it. Messages never hold a credential. */
interface TransferProblem {
  reason: 'AccountServiceUnavailable';
  message: string;
}

/** What one noted check means for the cluster's next check and its status. */
interface TransferNote {
  /** Re-check this soon (a 5xx within the backoff steps); otherwise the next check is one interval away. */
  retryInMs?: number;
  /** The cluster's `Health` changed (turned False, or back): its status is to be reported now. */
  healthChanged: boolean;
}

/**
 * The fleet's memory of failed transfer checks, per cluster: consecutive `unreachable` outcomes (5xx,
 * timeouts, network errors) are re-checked after `transferBackoff(intervalMs)` (interval/24,
 * doubling, `TRANSFER_RETRY_STEPS` steps); one more after the last step turns the cluster's `Health`
 * False (`AccountServiceUnavailable`, Degraded) until a check gets an answer again. In memory: a
 * restarted adapter starts counting afresh (its first check reports again). Any other outcome
 * resets the count.
 */
export class TransferHealth {
  private readonly failures = new Map<string, number>();
  private readonly degraded = new Map<string, TransferProblem>();
  private readonly backoff: number[];

  constructor(intervalMs: number) {
    this.backoff = transferBackoff(intervalMs);
  }

  /** Records one check's outcome for `clusterId`. */
  note(clusterId: string, outcome: TransferOutcome): TransferNote {
    if (outcome.kind !== 'unreachable') {
      this.failures.delete(clusterId);
      return { healthChanged: this.degraded.delete(clusterId) };
    }
    const failures = (this.failures.get(clusterId) ?? 0) + 1;
    this.failures.set(clusterId, failures);
    if (failures <= TRANSFER_RETRY_STEPS)
      return { retryInMs: this.backoff[failures - 1], healthChanged: false };
    const was = this.degraded.has(clusterId);
    this.degraded.set(clusterId, {
      reason: 'AccountServiceUnavailable',
      message: `Degraded: ownership transfer checks failed ${failures} times in a row: ${outcome.message}`,
    });
    return { healthChanged: !was };
  }

  /** The problem to show in the cluster's `Health`, or undefined when its transfer checks are fine. */
  problem(clusterId: string): TransferProblem | undefined {
    return this.degraded.get(clusterId);
  }

  /** Drops a deleted cluster. */
  forget(clusterId: string): void {
    this.failures.delete(clusterId);
    this.degraded.delete(clusterId);
  }
}
