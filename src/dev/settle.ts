import { setTimeout as sleep } from 'node:timers/promises';
import type { AdapterStatus, Cluster } from '../hyperfleet/types.js';
import { ADAPTER_NAME } from '../reconcile/status-report.js';

/** Read access to the API's state, as the stand-in offers it in process. */
export interface ClusterStateReader {
  getCluster(id: string): Cluster | undefined;
  listStatuses(id: string): AdapterStatus[];
}

/** Decides whether one cluster is where the caller wants it; `cluster` is undefined once it is removed. */
export type SettledWhen = (cluster: Cluster | undefined, status: AdapterStatus | undefined) => boolean;

/** The adapter has reported on the cluster's current generation (whatever the outcome). */
export const reportedOnCurrentGeneration: SettledWhen = (cluster, status) =>
  cluster !== undefined && status !== undefined && status.observed_generation === cluster.generation;

/** The adapter reports `Available=True` for the cluster's current generation. */
export const availableOnCurrentGeneration: SettledWhen = (cluster, status) =>
  reportedOnCurrentGeneration(cluster, status) &&
  status?.conditions.find((c) => c.type === 'Available')?.status === 'True';

export interface SettleOptions {
  /** Give up after this long (ms). */
  timeoutMs: number;
  /** Time between two looks (default 50 ms). */
  intervalMs?: number;
  /** Told after each look how many clusters are settled. */
  onProgress?: (settled: number, total: number) => void;
  signal?: AbortSignal;
}

/** The pull secret adapter's status of a cluster, or undefined (none yet, or the cluster is gone). */
export function pullSecretStatus(
  reader: ClusterStateReader,
  id: string,
  cluster = reader.getCluster(id),
): AdapterStatus | undefined {
  if (cluster === undefined) return undefined;
  return reader.listStatuses(id).find((s) => s.adapter === ADAPTER_NAME);
}

/**
 * Waits until every cluster in `ids` satisfies `settled`. A cluster counts once settled and is not
 * looked at again, so the cost of each look falls as the work completes; the pause between looks
 * grows with their cost, so watching a big fleet never starves the stack it watches.
 * Resolves `{ settled: true }` when all are, `{ settled: false, pending }` at the timeout or on abort.
 */
export async function waitUntilSettled(
  reader: ClusterStateReader,
  ids: readonly string[],
  settled: SettledWhen,
  options: SettleOptions,
): Promise<{ settled: boolean; pending: string[]; elapsedMs: number }> {
  const started = performance.now();
  let pending = [...ids];
  for (;;) {
    const lookStarted = performance.now();
    pending = pending.filter((id) => {
      const cluster = reader.getCluster(id);
      return !settled(cluster, pullSecretStatus(reader, id, cluster));
    });
    const lookMs = performance.now() - lookStarted;
    options.onProgress?.(ids.length - pending.length, ids.length);
    const elapsedMs = performance.now() - started;
    if (pending.length === 0) return { settled: true, pending, elapsedMs };
    if (elapsedMs >= options.timeoutMs || options.signal?.aborted === true)
      return { settled: false, pending, elapsedMs };
    await sleep(Math.max(options.intervalMs ?? 50, lookMs * 9), undefined, { signal: options.signal }).catch(
      () => undefined,
    );
  }
}
