import { createHash } from 'node:crypto';
import { describeError } from '../errors/index.js';
import type { Logger } from '../observability/logger.js';
import { TokenBucket } from '../util/token-bucket.js';
import { decide, runOutcome } from '../reconcile/outcome-table.js';
import type { ClusterRun } from '../reconcile/pipeline-plugin.js';

/** What one scheduled check came to, as the fleet needs it to plan the cluster's next one. */
export type FleetCheck =
  /** Checked; `retryInMs` asks for an early re-check (a 5xx within the backoff steps). */
  | { kind: 'checked'; retryInMs?: number }
  /** The cluster no longer exists, or is being deleted: forgotten. */
  | { kind: 'gone' }
  /** Not checked now (preconditions not met, no store, a failed read): next interval. */
  | { kind: 'skipped' }
  /** An event of the cluster replaced the check: re-checked soon. */
  | { kind: 'superseded' };

interface TransferFleetOptions {
  /** Each cluster is checked once per interval. */
  intervalMs: number;
  /** Share (0-1) of the interval the first checks are spread over, by a hash of the cluster id. */
  jitter: number;
  /** Highest rate of checks started (each makes one account service request), all clusters together. */
  requestsPerSecond: number;
  /** Checks running at once (they also queue in the per-cluster scheduler). */
  maxInFlight: number;
  /** Runs one cluster's check (through the pipeline's per-cluster scheduler). Never throws. */
  check: (clusterId: string) => Promise<FleetCheck>;
  /** Lists the ids of the clusters that exist (not deleted); run at start and once per interval. */
  list?: (signal: AbortSignal) => Promise<string[]>;
  logger: Logger;
  /**
   * Names the periodic work in logs (default `transfer checks`, operation `transfer-fleet`); the entitlement
   * refresh reuses the fleet.
   */
  label?: { operation: string; work: string; listFailed: string };
}

/**
 * What the fleet does after a run that ended before its work (`runForCluster`), as the core's
 * outcome table decides it for an event (`decide`): `gone` (forgotten), `superseded` (re-run soon),
 * `retry` (the cluster could not be read for a retryable reason: re-run after the first backoff
 * step) or `skipped` (a lasting failure, preconditions: the next interval).
 */
export function decideRun(run: Exclude<ClusterRun<unknown>, { kind: 'done' }>): FleetRunDecision {
  const decision = decide(runOutcome(run));
  if (decision.event === 'gone' || decision.event === 'superseded') return decision.event;
  return decision.disposition === 'retry' ? 'retry' : 'skipped';
}

/** See {@link decideRun}. */
export type FleetRunDecision = 'gone' | 'superseded' | 'retry' | 'skipped';

/** A cluster's place in the interval: a fraction in [0, 1) from its id, the same on every replica and restart. */
export function clusterPhase(clusterId: string): number {
  return createHash('sha256').update(clusterId).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * Fleet scheduling of ownership transfer checks (docs/account-service.md): every cluster the
 * adapter knows (seen in an event, or in the periodic cluster list) is checked once per interval.
 * A cluster's first check waits `phase(id) × jitter × interval` (a deterministic spread, so 10,000
 * clusters never ask at once); each next one is an interval after the last. Checks start through
 * a token bucket of `requestsPerSecond` (bursts of a tenth of a second) with at most `maxInFlight`
 * running, so the account service sees a bounded rate whatever the fleet size. A 5xx answer is
 * re-checked after the backoff the check returns; a cluster gone is forgotten.
 *
 * One timer per known cluster (unref'd); memory is O(clusters).
 */
export class TransferFleet {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly bucket: TokenBucket;
  private readonly stopper = new AbortController();
  private inFlight = 0;
  private pumping = false;
  private slotFree?: () => void;
  private listTimer?: NodeJS.Timeout;
  private readonly running = new Set<Promise<void>>();
  private readonly checking = new Set<string>();
  private get label(): { operation: string; work: string; listFailed: string } {
    return (
      this.options.label ?? {
        operation: 'transfer-fleet',
        work: 'transfer checks',
        listFailed: 'Could not list clusters for transfer checks; keeping the known ones',
      }
    );
  }

  constructor(private readonly options: TransferFleetOptions) {
    const perSecond = options.requestsPerSecond;
    this.bucket = new TokenBucket(perSecond, Math.max(1, Math.floor(perSecond / 10)), 1000);
  }

  /** Clusters known (each with its next check planned or queued). */
  get size(): number {
    return this.timers.size + this.queued.size;
  }

  /** True while the fleet plans checks for the cluster. */
  has(clusterId: string): boolean {
    return this.timers.has(clusterId) || this.queued.has(clusterId) || this.checking.has(clusterId);
  }

  /** Starts the periodic cluster list (when there is one). */
  start(): void {
    if (this.options.list === undefined) return;
    const tick = () => {
      void this.relist().finally(() => {
        if (this.stopper.signal.aborted) return;
        this.listTimer = setTimeout(tick, this.options.intervalMs);
        this.listTimer.unref();
      });
    };
    tick();
  }

  /** A cluster exists: plan its first check if it is new. */
  seen(clusterId: string): void {
    if (
      this.stopper.signal.aborted ||
      this.timers.has(clusterId) ||
      this.queued.has(clusterId) ||
      this.checking.has(clusterId)
    )
      return;
    this.plan(clusterId, Math.floor(clusterPhase(clusterId) * this.options.jitter * this.options.intervalMs));
  }

  /** A cluster was deleted: no more checks. */
  forget(clusterId: string): void {
    clearTimeout(this.timers.get(clusterId));
    this.timers.delete(clusterId);
    this.queued.delete(clusterId);
    this.checking.delete(clusterId);
  }

  /** Stops planning and starting checks; waits for the running ones. */
  async stop(): Promise<void> {
    this.stopper.abort();
    clearTimeout(this.listTimer);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.queued.clear();
    this.queue.length = 0;
    this.slotFree?.();
    await Promise.allSettled([...this.running]);
  }

  private async relist(): Promise<void> {
    const { list, logger } = this.options;
    if (list === undefined) return;
    try {
      const ids = new Set(await list(this.stopper.signal));
      for (const id of ids) this.seen(id);
      for (const id of [...this.timers.keys(), ...this.queued, ...this.checking])
        if (!ids.has(id)) this.forget(id);
      logger.debug(
        { operation: this.label.operation, clusters: ids.size },
        `Cluster list read for ${this.label.work}`,
      );
    } catch (err) {
      if (!this.stopper.signal.aborted) {
        logger.warn({ operation: this.label.operation, ...describeError(err) }, this.label.listFailed);
      }
    }
  }

  private plan(clusterId: string, delayMs: number): void {
    if (this.stopper.signal.aborted) return;
    clearTimeout(this.timers.get(clusterId));
    const timer = setTimeout(() => {
      this.timers.delete(clusterId);
      this.queued.add(clusterId);
      this.queue.push(clusterId);
      void this.pump();
    }, delayMs);
    timer.unref();
    this.timers.set(clusterId, timer);
  }

  /** Starts queued checks, one token each, at most `maxInFlight` at once. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.stopper.signal.aborted && this.queue.length > 0) {
        if (this.inFlight >= this.options.maxInFlight) {
          await new Promise<void>((resolve) => (this.slotFree = resolve));
          continue;
        }
        const clusterId = this.queue.shift() as string;
        // Forgotten while queued: no request for it.
        if (!this.queued.has(clusterId)) continue;
        await this.bucket.acquire(this.stopper.signal);
        this.queued.delete(clusterId);
        this.checking.add(clusterId);
        this.inFlight++;
        const run = this.run(clusterId).finally(() => {
          this.inFlight--;
          this.running.delete(run);
          const free = this.slotFree;
          this.slotFree = undefined;
          free?.();
        });
        this.running.add(run);
      }
    } catch {
      // Aborted by stop().
    } finally {
      this.pumping = false;
    }
  }

  private async run(clusterId: string): Promise<void> {
    const { intervalMs } = this.options;
    const result = await this.options.check(clusterId);
    // Forgotten while its check ran (deleted, or gone from the list): no next check.
    if (!this.checking.delete(clusterId) || this.stopper.signal.aborted) return;
    if (result.kind === 'gone') return this.forget(clusterId);
    if (result.kind === 'superseded') return this.plan(clusterId, Math.min(intervalMs / 24, 60_000));
    this.plan(
      clusterId,
      result.kind === 'checked' && result.retryInMs !== undefined ? result.retryInMs : intervalMs,
    );
  }
}
