import type { Logger } from '../observability/logger.js';
import type { ClusterNames } from '../pullsecret/cluster-names.js';
import type { WorkOutcome, WorkTarget } from './outcome.js';

/** One cluster to provision, with its inputs already read from the API. */
export interface ClusterWork {
  clusterId: string;
  generation: number;
  target: WorkTarget;
  /** The names resolved once for this event (`resolveCluster`): executors do not derive them again. */
  names: ClusterNames;
  /** The pull secret text (a credential). */
  pullSecret: string;
  log: Logger;
}

/** One deleted cluster to clean up. */
export interface ClusterCleanup {
  clusterId: string;
  generation: number;
  target: WorkTarget;
  names: ClusterNames;
  log: Logger;
}

/**
 * The one contract of the places the adapter's work runs (in this process, or as Kubernetes Jobs).
 * The pipeline calls only this: it never knows which executor it drives.
 *
 * Both work methods never throw: every failure becomes an outcome (`failed`, `job-failed`,
 * `finalize-failed`), so the pipeline can always report. Both honour `signal` (the broker's
 * per-message signal joined with the scheduler's): once it fires they stop at the next call.
 */
export interface Executor {
  /** Stores the pull secret and provisions the Kubernetes Secret for one cluster generation. */
  execute(work: ClusterWork, signal: AbortSignal): Promise<WorkOutcome>;
  /**
   * Removes everything this executor made for the cluster and confirms it is gone: `finalized`
   * only then, `finalize-failed` with the reason when anything could not be removed or confirmed.
   * Objects already gone count as removed. Safe to call again, also concurrently.
   */
  finalize(cleanup: ClusterCleanup, signal: AbortSignal): Promise<WorkOutcome>;
  /** Releases what the executor holds (not the stores or targets, which the service owns). */
  close(): Promise<void>;
}
