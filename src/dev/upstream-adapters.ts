import type { Broker } from '../brokers/broker.js';
import { describeError } from '../errors/index.js';
import { decodeClusterEvent } from '../events/cluster-event.js';
import type { HyperFleetClient } from '../hyperfleet/client.js';
import type { AdapterStatusReport, Cluster } from '../hyperfleet/types.js';
import type { Logger } from '../observability/logger.js';
import { successfulConditionType } from './hyperfleet-api/index.js';

/** The adapters the pull secret adapter waits for (its default preconditions). */
export const UPSTREAM_ADAPTERS = ['validation', 'dns', 'placement'] as const;

/**
 * Cluster label naming upstream adapters the dev stack should hold back (comma-separated, e.g. `dns`):
 * they report `Available=False`, so the pull secret adapter skips the cluster and says why.
 */
export const HOLD_LABEL = 'dev.hyperfleet.io/hold';

/**
 * Plays the validation, dns and placement adapters in the dev stack, so a cluster created with a
 * plain `POST /clusters` gets provisioned like on a real fleet. For each event it reports, through the
 * API, `Available=True` at the cluster's generation for every upstream adapter that has not done so
 * yet (or `False` for one held by `HOLD_LABEL`). Deleted clusters are left alone.
 */
export class UpstreamAdapters {
  constructor(
    private readonly api: Pick<HyperFleetClient, 'getCluster' | 'putStatus'>,
    private readonly logger: Logger,
  ) {}

  /**
   * Brings one cluster's upstream statuses up to date.
   * @throws PullSecretError from the API (API_UNAVAILABLE, ...)
   */
  async reconcile(clusterId: string, signal?: AbortSignal): Promise<void> {
    const cluster = await this.api.getCluster(clusterId, { signal });
    if (cluster === undefined || cluster.deleted_time !== undefined) return;
    const held = new Set((cluster.labels[HOLD_LABEL] ?? '').split(',').map((a) => a.trim()));
    await Promise.all(
      UPSTREAM_ADAPTERS.map(async (adapter) => {
        const available = held.has(adapter) ? 'False' : 'True';
        const current = cluster.status.conditions.find((c) => c.type === successfulConditionType(adapter));
        if (current?.status === available && current.observed_generation === cluster.generation) return;
        await this.api.putStatus(cluster.id, upstreamReport(adapter, cluster, available), { signal });
      }),
    );
  }

  /**
   * A publisher that lets these adapters see each event before `next` gets it, the way their own
   * subscriptions would, but in an order that spares the pull secret adapter a skip-and-wait round.
   * Their failures are logged, never passed on: the event still goes out.
   */
  inFrontOf(next: Pick<Broker, 'publish'>): Pick<Broker, 'publish'> {
    return {
      publish: async (body, attributes) => {
        try {
          await this.reconcile(decodeClusterEvent(body).clusterId);
        } catch (err) {
          this.logger.warn(
            { operation: 'upstream-adapters', ...describeError(err) },
            'Simulated upstream adapters could not report',
          );
        }
        await next.publish(body, attributes);
      },
    };
  }
}

function upstreamReport(adapter: string, cluster: Cluster, available: 'True' | 'False'): AdapterStatusReport {
  const done = available === 'True';
  const reason = done ? 'SimulatedByDevStack' : 'HeldByLabel';
  const message = done
    ? `Simulated ${adapter} adapter: done`
    : `Simulated ${adapter} adapter: held back by the ${HOLD_LABEL} label`;
  return {
    adapter,
    observed_generation: cluster.generation,
    observed_time: new Date().toISOString(),
    conditions: [
      { type: 'Applied', status: available, reason, message },
      { type: 'Available', status: available, reason, message },
      { type: 'Health', status: 'True', reason: 'Healthy', message: 'Simulated adapter' },
    ],
  };
}
