import type { Cluster } from '../../hyperfleet/types.js';

/** How often the Sentinel looks, and when it sends a cluster again. All in milliseconds. */
export interface SentinelIntervals {
  /** Time between two listings of the clusters. */
  pollIntervalMs: number;
  /**
   * A cluster not reconciled at its current generation is sent again once this long has passed since
   * its status last changed and since the last event for it (upstream `max_age_not_ready`).
   */
  debounceMs: number;
  /** A reconciled cluster is sent again once its status is this old: a resync (upstream `max_age_ready`). */
  maxAgeMs: number;
}

/** Upstream's values for the two ages; a faster poll than upstream's 5 s, so the dev stack feels immediate. */
export const DEFAULT_SENTINEL_INTERVALS: Readonly<SentinelIntervals> = Object.freeze({
  pollIntervalMs: 1_000,
  debounceMs: 10_000,
  maxAgeMs: 30 * 60_000,
});

/** What the Sentinel needs to know about one cluster, read from its aggregated conditions. */
export interface ClusterView {
  generation: number;
  /** `Reconciled`: every required adapter is done at `observedGeneration`. */
  reconciled?: { status: 'True' | 'False'; observedGeneration: number; lastUpdatedMs: number };
  /** `LastKnownReconciled`: True once the cluster was reconciled at some generation. */
  everReconciled: boolean;
}

/** The Sentinel's memory of its last event for a cluster. */
export interface PublishRecord {
  generation: number;
  atMs: number;
}

/** Why an event is sent. */
export type PublishReason = 'new-resource' | 'generation-changed' | 'not-reconciled' | 'max-age';

export type Decision =
  { publish: true; reason: PublishReason } | { publish: false; reason: 'debounced' | 'up-to-date' };

/** Reads the decision inputs from a cluster as the API returns it. */
export function viewOf(cluster: Pick<Cluster, 'generation' | 'status'>): ClusterView {
  const find = (type: string) => cluster.status.conditions.find((c) => c.type === type);
  // `Ready` is the deprecated name of `Reconciled`; older APIs only have that one.
  const reconciled = find('Reconciled') ?? find('Ready');
  const lastUpdatedMs = reconciled === undefined ? Number.NaN : Date.parse(reconciled.last_updated_time);
  return {
    generation: cluster.generation,
    ...(reconciled === undefined
      ? {}
      : {
          reconciled: {
            status: reconciled.status,
            observedGeneration: reconciled.observed_generation,
            lastUpdatedMs,
          },
        }),
    everReconciled: find('LastKnownReconciled')?.status === 'True',
  };
}

/**
 * The upstream Sentinel's decision, as a pure function of the cluster, the last event sent for it,
 * and the clock:
 * 1. not reconciled at its generation, and no event sent yet: `new-resource` (never reconciled) or
 *    `generation-changed` (reconciled at an older generation): send now;
 * 2. not reconciled, and the generation moved past the last event's: `generation-changed`: send now;
 * 3. not reconciled, and nothing happened for `debounceMs` (status update or event): `not-reconciled`;
 * 4. reconciled, and nothing happened for `maxAgeMs`: `max-age` (a resync, which must change nothing);
 * otherwise wait (`debounced`, `up-to-date`). The last event counts as activity, so a slow adapter is
 * not flooded with events it already has. Never throws.
 */
export function decide(
  view: ClusterView,
  last: PublishRecord | undefined,
  nowMs: number,
  intervals: Pick<SentinelIntervals, 'debounceMs' | 'maxAgeMs'>,
): Decision {
  const statusMs = view.reconciled?.lastUpdatedMs;
  const lastActivity = Math.max(
    Number.isFinite(statusMs) ? (statusMs as number) : -Infinity,
    last?.atMs ?? -Infinity,
  );
  const idleMs = nowMs - lastActivity;
  const reconciled =
    view.reconciled?.status === 'True' && view.reconciled.observedGeneration >= view.generation;
  if (!reconciled) {
    if (last === undefined)
      return { publish: true, reason: view.everReconciled ? 'generation-changed' : 'new-resource' };
    if (view.generation > last.generation) return { publish: true, reason: 'generation-changed' };
    return idleMs >= intervals.debounceMs
      ? { publish: true, reason: 'not-reconciled' }
      : { publish: false, reason: 'debounced' };
  }
  return idleMs >= intervals.maxAgeMs
    ? { publish: true, reason: 'max-age' }
    : { publish: false, reason: 'up-to-date' };
}
