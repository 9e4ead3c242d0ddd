/*
 * The entitlements plug-in (docs/account-service.md, "Entitlement certificates"). Registers a
 * `PipelinePlugin`: the refresher hears of the clusters events read and of every new pull secret
 * version, and the certificate's expiry goes into the status data (`entitlementExpiresAt`). The
 * refreshes run through the core's `runForCluster`; the schedule runs in the replica that leads
 * (`lead`). The adapter wires it in one line.
 */
import type { AccountServiceClient } from '../account-service/client.js';
import type { BackgroundDeps } from '../account-service/adapter-plugin.js';
import { refreshEntitlement } from './entitlement.js';
import type { EntitlementExpiry, EntitlementMetrics } from './expiry.js';
import { EntitlementRefresher, type RefreshResult } from './refresher.js';
import { decideRun } from '../account-service/transfer-fleet.js';
import { describeError } from '../errors/index.js';
import { listClusterIds } from '../reconcile/cluster-list.js';
import type { EventPipeline } from '../reconcile/pipeline.js';
import type { PipelinePlugin } from '../reconcile/pipeline-plugin.js';

interface AdapterEntitlementDeps extends BackgroundDeps {
  /** The adapter's `entitlements` section (docs/account-service.md, "Entitlement certificates"). */
  section: { interval: number; jitter: number; arch: string; requestsPerSecond: number };
  client: AccountServiceClient;
  /** The expiry tracker the fleet-wide gauges read, and the refresh counters (the adapter's metrics own both). */
  entitlementMetrics: { expiry: EntitlementExpiry; counters: EntitlementMetrics };
}

/** The entitlement parts of a running adapter (docs/account-service.md, "Entitlement certificates"). */
export interface AdapterEntitlements {
  /**
   * For `PipelineDeps.plugins`: the refresher schedules clusters events show and forgets gone ones,
   * refreshes at once after a new pull secret version, and the expiry goes into the status data.
   */
  readonly plugin: PipelinePlugin;
  readonly expiry: EntitlementExpiry;
  /** Gives the refreshes the pipeline they run through (every replica), before the broker starts. */
  attach(pipeline: EventPipeline): void;
  /** Starts the refresh schedule while this replica leads; `stop` ends it (leadership lost). */
  lead(): { stop(): Promise<void> };
  stop(): Promise<void>;
}

/**
 * Builds the `EntitlementRefresher` of a running adapter: every cluster of the HyperFleet API list
 * and of events, refreshed once per `entitlements.interval` and at once after a reconcile wrote a new
 * pull secret version. Each refresh runs through the pipeline's per-cluster scheduler with the
 * cluster resolved as an event would (store, target, current pull secret); a certificate with a new
 * expiry is reported in the status (`data.entitlementExpiresAt`) from a fresh reconcile.
 */
export function createAdapterEntitlements(deps: AdapterEntitlementDeps): AdapterEntitlements {
  const { section, logger } = deps;
  // The adapter's metrics own the expiry tracker the fleet-wide gauges read.
  const { expiry, counters: entitlementMetrics } = deps.entitlementMetrics;
  let pipelineRef: EventPipeline | undefined;

  const refresh = async (clusterId: string): Promise<RefreshResult> => {
    const pipeline = pipelineRef;
    if (pipeline === undefined) return 'skipped';
    try {
      const run = await pipeline.runForCluster(
        clusterId,
        'entitlement-refresh',
        async ({ cluster, target, pullSecret, signal }) =>
          await refreshEntitlement(cluster.id, Buffer.from(pullSecret, 'utf8'), {
            client: deps.client,
            store: await deps.stores.forTarget(target),
            push: { retry: deps.retry, signal },
            target: deps.kubernetes,
            namespace: target.namespace,
            arch: section.arch,
            intervalMs: section.interval,
            signal,
          }),
        // A new expiry shows in the status now; recorded here too so that report carries it.
        (outcome) => {
          if (outcome.kind !== 'refreshed' || expiry.expiresAt(clusterId) === outcome.expiresAt) return false;
          expiry.record(clusterId, outcome.expiresAt);
          return true;
        },
      );
      if (run.kind === 'done') return run.value;
      if (run.kind === 'failed')
        logger.warn(
          { operation: 'entitlement-refresh', cluster_id: clusterId, ...describeError(run.error) },
          'Entitlement refresh could not read the cluster',
        );
      return decideRun(run);
    } catch (err) {
      logger.warn(
        { operation: 'entitlement-refresh', cluster_id: clusterId, ...describeError(err) },
        'Entitlement refresh stopped',
      );
      return 'skipped';
    }
  };

  const refresher = new EntitlementRefresher({
    intervalMs: section.interval,
    jitter: section.jitter,
    requestsPerSecond: section.requestsPerSecond,
    maxInFlight: deps.concurrency,
    refresh,
    expiry,
    metrics: entitlementMetrics,
    list: (signal) => listClusterIds(deps.api, signal),
    logger,
  });

  return {
    expiry,
    plugin: {
      onClusterRead: (clusterId, exists) =>
        void (exists ? refresher.seen(clusterId) : refresher.forget(clusterId)),
      onPullSecretWritten: (clusterId) => {
        refresher.pullSecretChanged(clusterId).catch((err: unknown) => {
          logger.warn(
            { operation: 'entitlement-refresh', cluster_id: clusterId, ...describeError(err) },
            'Entitlement refresh after a new pull secret failed',
          );
        });
      },
      statusOf: (clusterId, outcome) => {
        if (outcome.kind === 'finalized' || outcome.kind === 'finalize-failed') return undefined;
        const entitlementExpiresAt = expiry.expiresAt(clusterId);
        return entitlementExpiresAt === undefined ? undefined : { data: { entitlementExpiresAt } };
      },
    },
    attach(pipeline) {
      pipelineRef = pipeline;
    },
    lead() {
      refresher.start();
      return { stop: () => refresher.stop() };
    },
    async stop() {
      await refresher.stop();
    },
  };
}
