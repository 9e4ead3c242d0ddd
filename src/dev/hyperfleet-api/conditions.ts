import type { AdapterStatus, Cluster, ResourceCondition } from '../../hyperfleet/types.js';

/**
 * Cluster status aggregation, as the API does it after each stored report:
 * - `{Adapter}Successful` per reporting adapter, from its `Available` condition (e.g. `DnsSuccessful`);
 * - `Reconciled`: every required adapter reported `Available=True` (or, once deletion was requested,
 *   `Finalized=True`) at the cluster's current generation;
 * - `LastKnownReconciled`: sticky; True once all required adapters were Available=True at one common
 *   generation, and it stays True while a newer generation is being worked on.
 * Conditions of other types (e.g. seeded from a fixture) are kept as they are.
 */
export interface AggregationInput {
  cluster: Cluster;
  statuses: readonly AdapterStatus[];
  requiredAdapters: readonly string[];
  lastKnownReconciledGeneration: number | undefined;
  now: string;
}

export interface AggregationResult {
  conditions: ResourceCondition[];
  lastKnownReconciledGeneration: number | undefined;
  /** Deletion was requested and every required adapter reported Finalized=True: remove the cluster. */
  finalized: boolean;
}

/** `pullsecret` → `PullsecretSuccessful`, `pull-secret` → `PullSecretSuccessful`. */
export function successfulConditionType(adapter: string): string {
  const words = adapter.split(/[-_.]/).filter((w) => w !== '');
  return `${words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}Successful`;
}

function conditionOf(status: AdapterStatus | undefined, type: string): string | undefined {
  return status?.conditions.find((c) => c.type === type)?.status;
}

export function aggregate(input: AggregationInput): AggregationResult {
  const { cluster, statuses, requiredAdapters, now } = input;
  const byAdapter = new Map(statuses.map((s) => [s.adapter, s]));
  const deleting = cluster.deleted_time !== undefined;
  const goal = deleting ? 'Finalized' : 'Available';
  const missing = requiredAdapters.filter((a) => {
    const status = byAdapter.get(a);
    return status?.observed_generation !== cluster.generation || conditionOf(status, goal) !== 'True';
  });
  const required = requiredAdapters.map((a) => byAdapter.get(a));
  const common = required[0]?.observed_generation;
  const allAvailable = required.every(
    (s) => s !== undefined && s.observed_generation === common && conditionOf(s, 'Available') === 'True',
  );
  let lastKnown = input.lastKnownReconciledGeneration;
  if (allAvailable && common !== undefined && (lastKnown === undefined || common > lastKnown))
    lastKnown = common;
  if (requiredAdapters.length === 0) lastKnown = cluster.generation;

  const existing = new Map(cluster.status.conditions.map((c) => [c.type, c]));
  const upsert = (
    next: Omit<ResourceCondition, 'created_time' | 'last_transition_time' | 'last_updated_time'>,
  ): ResourceCondition => {
    const previous = existing.get(next.type);
    return {
      ...next,
      created_time: previous?.created_time ?? now,
      last_updated_time: now,
      last_transition_time:
        previous !== undefined && previous.status === next.status ? previous.last_transition_time : now,
    };
  };
  const reconciled = upsert({
    type: 'Reconciled',
    status: missing.length === 0 ? 'True' : 'False',
    reason: missing.length === 0 ? 'ReconciledAll' : 'ReconciledMissingAdapters',
    message:
      missing.length === 0
        ? `All required adapters reported ${goal}=True at the current generation`
        : `Waiting for ${goal}=True at generation ${cluster.generation} from: ${missing.join(', ')}`,
    observed_generation: cluster.generation,
  });
  const lastKnownReconciled = upsert({
    type: 'LastKnownReconciled',
    status: lastKnown === undefined ? 'False' : 'True',
    reason: lastKnown === undefined ? 'MissingAdapters' : 'AllAdaptersReconciled',
    message:
      lastKnown === undefined
        ? 'Required adapters have not all reported Available=True at one generation yet'
        : 'All required adapters report Available=True for the tracked generation',
    observed_generation: lastKnown ?? cluster.generation,
  });

  const derived = new Map<string, ResourceCondition>();
  for (const status of statuses) {
    const available = status.conditions.find((c) => c.type === 'Available');
    // An adapter's first report may say Unknown; cluster conditions are True/False only, so it feeds none.
    if (available === undefined || available.status === 'Unknown') continue;
    derived.set(successfulConditionType(status.adapter), {
      type: successfulConditionType(status.adapter),
      status: available.status,
      ...(available.reason === undefined ? {} : { reason: available.reason }),
      ...(available.message === undefined ? {} : { message: available.message }),
      observed_generation: status.observed_generation,
      created_time: status.created_time,
      last_updated_time: status.last_report_time,
      last_transition_time: available.last_transition_time,
    });
  }
  const others = cluster.status.conditions
    .filter((c) => c.type !== 'Reconciled' && c.type !== 'LastKnownReconciled')
    .map((c) => derived.get(c.type) ?? c);
  const added = [...derived.values()].filter((c) => !existing.has(c.type));
  return {
    conditions: [reconciled, lastKnownReconciled, ...others, ...added],
    lastKnownReconciledGeneration: lastKnown,
    finalized: deleting && missing.length === 0,
  };
}
