import { TransferFleet, type FleetCheck, type FleetRunDecision } from '../account-service/transfer-fleet.js';
import type { Logger } from '../observability/logger.js';
import { ENTITLEMENT_REASONS, type EntitlementOutcome } from './entitlement.js';
import type { EntitlementExpiry, EntitlementMetrics } from './expiry.js';
import { transferBackoff } from '../account-service/transfer-check.js';

/**
 * What one refresh came to, for the refresher: its outcome, or what the core's outcome table decides
 * for a run that ended before it (`decideRun`: gone, superseded, retry, skipped).
 */
export type RefreshResult = EntitlementOutcome | FleetRunDecision;

interface EntitlementRefresherOptions {
  intervalMs: number;
  jitter: number;
  requestsPerSecond: number;
  maxInFlight: number;
  /**
   * Refreshes one cluster (reads its pull secret, `refreshEntitlement`); `gone` for a cluster that no
   * longer exists, `skipped` when it cannot now (no store, no pull secret yet), `superseded` when an
   * event took the cluster's turn first (tried again soon, as a superseded transfer check). Never throws.
   */
  refresh: (clusterId: string) => Promise<RefreshResult>;
  expiry: EntitlementExpiry;
  metrics?: EntitlementMetrics;
  list?: (signal: AbortSignal) => Promise<string[]>;
  logger: Logger;
}

/**
 * Refreshes every known cluster's entitlement once per interval, on the transfer fleet's machinery
 * (deterministic phase per cluster, token-bucket pacing, bounded in-flight), and at once when the
 * cluster's pull secret changed (`pullSecretChanged`). Records expiry and metrics. The schedule
 * runs only in the replica that leads (`start` / `stop` as leadership comes and goes), so the account
 * service sees the configured rate once, whatever the number of replicas.
 */
export class EntitlementRefresher {
  /** The schedule, while this replica leads (`start` to `stop`); refreshes after a new version run without it. */
  private fleet?: TransferFleet;

  constructor(private readonly options: EntitlementRefresherOptions) {}

  /** Starts the schedule (again after a `stop`: this replica leads again). */
  start(): void {
    if (this.fleet !== undefined) return;
    const { options } = this;
    this.fleet = new TransferFleet({
      intervalMs: options.intervalMs,
      jitter: options.jitter,
      requestsPerSecond: options.requestsPerSecond,
      maxInFlight: options.maxInFlight,
      list: options.list,
      logger: options.logger,
      label: {
        operation: 'entitlement-refresh',
        work: 'entitlement refreshes',
        listFailed: 'Could not list clusters for entitlement refreshes; keeping the known ones',
      },
      check: (clusterId) => this.refreshOne(clusterId),
    });
    this.fleet.start();
  }

  /** A cluster was seen (an event): scheduled at its phase if new. */
  seen(clusterId: string): void {
    this.fleet?.seen(clusterId);
  }

  /**
   * The cluster's pull secret got a new version: refresh now (the new token may bring another
   * certificate), in the replica that wrote it, leader or not.
   */
  async pullSecretChanged(clusterId: string): Promise<RefreshResult> {
    this.fleet?.seen(clusterId);
    return this.run(clusterId);
  }

  forget(clusterId: string): void {
    this.fleet?.forget(clusterId);
    this.options.expiry.forget(clusterId);
  }

  /** Stops the schedule and waits for its running refreshes. */
  async stop(): Promise<void> {
    const fleet = this.fleet;
    this.fleet = undefined;
    await fleet?.stop();
  }

  private async refreshOne(clusterId: string): Promise<FleetCheck> {
    const outcome = await this.run(clusterId);
    if (outcome === 'gone' || outcome === 'skipped' || outcome === 'superseded') return { kind: outcome };
    if (outcome === 'retry' || outcome.kind === 'unreachable')
      return { kind: 'checked', retryInMs: transferBackoff(this.options.intervalMs)[0] };
    return { kind: 'checked' };
  }

  private async run(clusterId: string): Promise<RefreshResult> {
    const outcome = await this.options.refresh(clusterId);
    if (outcome === 'gone') {
      this.options.expiry.forget(clusterId);
      return outcome;
    }
    if (typeof outcome === 'string') return outcome;
    this.options.metrics?.refreshes.inc({ result: ENTITLEMENT_REASONS[outcome.kind].label });
    if (outcome.kind === 'refreshed') this.options.expiry.record(clusterId, outcome.expiresAt);
    else
      this.options.logger.warn(
        {
          operation: 'entitlement-refresh',
          cluster_id: clusterId,
          reason: ENTITLEMENT_REASONS[outcome.kind].reason,
        },
        `Entitlement refresh failed: ${outcome.message}`,
      );
    return outcome;
  }
}
