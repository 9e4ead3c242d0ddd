import type { ClusterStatusRow } from '../status-view/status-row.js';

/** The list filters of `GET clusters?filter=`: one state per cluster, from its pull secret status. */
export const CLUSTER_FILTERS = ['failed', 'degraded', 'pending', 'deleting', 'healthy'] as const;
export type ClusterFilter = (typeof CLUSTER_FILTERS)[number];

/** A skip is waiting, not failing (docs/status-contract.md). */
const SKIPPED_REASON = 'PreconditionNotMet';

/**
 * The state of a cluster from its status row, first match wins: `deleting` (deletion in progress);
 * `pending` (no report yet, or one for an older generation); `failed` (Applied=False other than a
 * skip); `degraded` (Health=False, or the secret not Available, e.g. skipped or a Job still running);
 * else `healthy`.
 */
export function clusterState(row: ClusterStatusRow): ClusterFilter {
  const report = row.report;
  if (row.deleting) return 'deleting';
  if (report === undefined || report.observedGeneration < row.generation) return 'pending';
  if (report.applied?.status === 'False' && report.applied.reason !== SKIPPED_REASON) return 'failed';
  if (report.health?.status === 'False' || report.available?.status !== 'True') return 'degraded';
  return 'healthy';
}
