import { ANNOTATIONS, PULL_SECRET_TYPE } from '../kube/pull-secret-manifest.js';
import type { SecretCache, SecretChange } from '../kube/secret-cache.js';
import type { Logger } from '../observability/logger.js';
import type { DriftKind } from '../observability/metrics.js';
import { assertClusterId, MANAGED_BY } from '../pullsecret/identifiers.js';

/**
 * Drift repair: a managed pull secret Secret deleted, or its `.dockerconfigjson`, type or our
 * labels changed by someone else, triggers a reconcile of its cluster: the same path as a broker
 * event (GET the cluster, preconditions, store, Secret, status report) through the same per-cluster
 * scheduler, so it never runs alongside an event's work for the cluster. Re-running the reconcile
 * rather than copying the store's bytes back keeps every rule of the event path: a deleted cluster
 * is finalized rather than restored, preconditions hold, the newest generation wins, the status
 * says what was done. Keys, labels and annotations others added are not drift and are kept.
 *
 * Our own writes are not drift: a write's answer updates the cache first (the watch event is then
 * not newer), and a payload equal to the one this process last wrote is ours; deletions the writer
 * announced are ours. Storms (a Secret edited in a loop) are damped per cluster: the first repair
 * runs at once, each further one within `quietMs` of the last waits twice as long (up to `maxMs`),
 * and changes seen while one is waiting join it.
 */

const SUFFIX = '-pull-secret';

interface DriftBackoff {
  /** Delay of the second repair in a row; doubled for each further one. */
  baseMs: number;
  maxMs: number;
  /** Without drift for this long, a cluster's next repair runs at once again. */
  quietMs: number;
}

const DEFAULT_DRIFT_BACKOFF: DriftBackoff = { baseMs: 1000, maxMs: 5 * 60_000, quietMs: 10 * 60_000 };

/** The cluster a pull secret Secret belongs to (`{cluster-id}-pull-secret`), or undefined for any other Secret. */
function clusterOf(name: string): string | undefined {
  if (!name.endsWith(SUFFIX)) return undefined;
  const id = name.slice(0, -SUFFIX.length);
  try {
    assertClusterId(id);
    return id;
  } catch {
    return undefined;
  }
}

/**
 * What someone else changed, or undefined when the change is ours or harmless (a key, label or
 * annotation added by others, an update we wrote). Pure.
 */
export function classifyDrift(change: SecretChange): DriftKind | undefined {
  const { previous, current } = change;
  const clusterId = clusterOf(current?.name ?? previous?.name ?? '');
  if (clusterId === undefined) return undefined;
  if (current === undefined) {
    if (change.ours) return undefined;
    // Leaving the selection: `managed-by` was taken off (the reconcile then reports the Secret as unmanaged).
    return change.released ? 'labels' : 'deleted';
  }
  if (current.type !== PULL_SECRET_TYPE) return 'type';
  if (current.labels[MANAGED_BY.key] !== MANAGED_BY.value || current.labels['cluster-id'] !== clusterId)
    return 'labels';
  if (previous === undefined || current.payloadSha256 === previous.payloadSha256) return undefined;
  if (change.written !== undefined) return current.payloadSha256 === change.written ? undefined : 'data';
  // Not written by this process (since its start): ours changes the content annotation with the bytes.
  const fingerprint = ANNOTATIONS.contentSha256;
  return current.annotations[fingerprint] === previous.annotations[fingerprint] ? 'data' : undefined;
}

interface ClusterState {
  timer?: NodeJS.Timeout;
  kind?: DriftKind;
  namespace?: string;
  strikes: number;
  lastAt: number;
}

interface DriftRepairOptions {
  cache: Pick<SecretCache, 'onChange'>;
  /** Reconciles the cluster (`EventPipeline.reconcile`). */
  repair: (clusterId: string) => Promise<unknown>;
  onRepair: (kind: DriftKind) => void;
  logger: Logger;
  backoff?: DriftBackoff;
}

/** Listens to the cache and schedules repairs; see the module comment. */
export class DriftRepair {
  private readonly clusters = new Map<string, ClusterState>();
  private readonly backoff: DriftBackoff;
  private stopped = false;

  constructor(private readonly options: DriftRepairOptions) {
    this.backoff = options.backoff ?? DEFAULT_DRIFT_BACKOFF;
    options.cache.onChange((change) => this.seen(change));
  }

  /** Cancels waiting repairs (a running one finishes with the scheduler). */
  stop(): void {
    this.stopped = true;
    for (const state of this.clusters.values()) clearTimeout(state.timer);
    this.clusters.clear();
  }

  private seen(change: SecretChange): void {
    const kind = classifyDrift(change);
    const secret = change.current ?? change.previous;
    if (kind === undefined || secret === undefined || this.stopped) return;
    const clusterId = clusterOf(secret.name) ?? '';
    const now = Date.now();
    this.forgetQuiet(now);
    let state = this.clusters.get(clusterId);
    if (state?.timer !== undefined) return;
    if (state === undefined || now - state.lastAt > this.backoff.quietMs) state = { strikes: 0, lastAt: now };
    else state.strikes++;
    state.kind = kind;
    state.namespace = secret.namespace;
    this.clusters.set(clusterId, state);
    const delayMs =
      state.strikes === 0 ? 0 : Math.min(this.backoff.maxMs, this.backoff.baseMs * 2 ** (state.strikes - 1));
    const fired = state;
    fired.timer = setTimeout(() => void this.run(clusterId, fired, delayMs), delayMs);
    fired.timer.unref();
  }

  /** Clusters quiet for `quietMs` would start afresh anyway: their state goes (bounded memory). */
  private forgetQuiet(now: number): void {
    if (this.clusters.size < 1000) return;
    for (const [id, state] of this.clusters)
      if (state.timer === undefined && now - state.lastAt > this.backoff.quietMs) this.clusters.delete(id);
  }

  private async run(clusterId: string, state: ClusterState, delayMs: number): Promise<void> {
    state.timer = undefined;
    state.lastAt = Date.now();
    const kind = state.kind ?? 'deleted';
    this.options.onRepair(kind);
    this.options.logger.warn(
      {
        operation: 'drift-repair',
        cluster_id: clusterId,
        kind,
        namespace: state.namespace,
        delay_ms: delayMs,
        repairs_in_a_row: state.strikes + 1,
      },
      'Managed Kubernetes Secret changed by someone else; restoring it',
    );
    await this.options.repair(clusterId);
  }
}
