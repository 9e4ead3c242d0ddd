import type { AdapterStatus, Cluster } from '../hyperfleet/types.js';
import { maskUserinfo } from '../pullsecret/redact.js';

/** One condition as shown: status, reason, message. */
export interface ConditionView {
  status: string;
  reason?: string;
  message?: string;
}

/** What the adapter last reported about a cluster. */
export interface ReportView {
  observedGeneration: number;
  lastReportTime: string;
  applied?: ConditionView;
  available?: ConditionView;
  health?: ConditionView;
  finalized?: ConditionView;
  secretName?: string;
  secretVersion?: string;
  /** Set while the Secret is provisioned (Available=True). */
  kubernetesSecret?: { namespace: string; name: string };
  /** With retention on (docs/retention.md): the previous version and when its grace ends. */
  previousVersion?: string;
  previousGraceEndsAt?: string;
  /** A rollback pin the adapter serves (docs/retention.md): the restored version, who, until when. */
  pin?: { sourceVersion: string; by?: string; expiresAt?: string };
}

/** One cluster's line in `pull-secret status` (also its JSON form). */
export interface ClusterStatusRow {
  id: string;
  name: string;
  generation: number;
  deleting: boolean;
  /** The API's aggregated `Reconciled` condition. */
  reconciled?: string;
  /** Undefined until the adapter reports. */
  report?: ReportView;
}

function conditionView(status: AdapterStatus, type: string): ConditionView | undefined {
  const c = status.conditions.find((x) => x.type === type);
  if (c === undefined) return undefined;
  // Messages are shown as stored; one stored by an older adapter may quote a registry key with
  // `user:password@`, which is masked here.
  return {
    status: c.status,
    ...(c.reason === undefined ? {} : { reason: c.reason }),
    ...(c.message === undefined ? {} : { message: maskUserinfo(c.message) }),
  };
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined;

function kubernetesSecretOf(
  data: Record<string, unknown> | undefined,
): { namespace: string; name: string } | undefined {
  const k8s = data?.kubernetesSecret;
  if (typeof k8s !== 'object' || k8s === null) return undefined;
  const { namespace, name } = k8s as Record<string, unknown>;
  return typeof namespace === 'string' && typeof name === 'string' ? { namespace, name } : undefined;
}

/** `data.pin` as the status shows it (names and times only). */
function pinOf(data: Record<string, unknown> | undefined): ReportView['pin'] {
  const pin = data?.pin;
  if (typeof pin !== 'object' || pin === null) return undefined;
  const fields = pin as Record<string, unknown>;
  const sourceVersion = text(fields.sourceVersion);
  if (sourceVersion === undefined) return undefined;
  const by = text(fields.by);
  const expiresAt = text(fields.expiresAt);
  return {
    sourceVersion,
    ...(by === undefined ? {} : { by }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
}

/**
 * Builds the row for a cluster from the cluster and the adapter's stored status (if any). Pure; reads
 * only conditions and the status `data` fields the adapter writes (`secretName`, `secretVersion`,
 * `kubernetesSecret`), which never hold credentials.
 */
export function toStatusRow(cluster: Cluster, status: AdapterStatus | undefined): ClusterStatusRow {
  const row: ClusterStatusRow = {
    id: cluster.id,
    name: cluster.name,
    generation: cluster.generation,
    deleting: cluster.deleted_time !== undefined,
  };
  const reconciled = cluster.status.conditions.find((c) => c.type === 'Reconciled')?.status;
  if (reconciled !== undefined) row.reconciled = reconciled;
  if (status === undefined) return row;
  const available = conditionView(status, 'Available');
  const report: ReportView = {
    observedGeneration: status.observed_generation,
    lastReportTime: status.last_report_time,
  };
  for (const [key, type] of [
    ['applied', 'Applied'],
    ['available', 'Available'],
    ['health', 'Health'],
    ['finalized', 'Finalized'],
  ] as const) {
    const view = type === 'Available' ? available : conditionView(status, type);
    if (view !== undefined) report[key] = view;
  }
  const secretName = text(status.data?.secretName);
  const secretVersion = text(status.data?.secretVersion);
  const kubernetesSecret = available?.status === 'True' ? kubernetesSecretOf(status.data) : undefined;
  if (secretName !== undefined) report.secretName = secretName;
  if (secretVersion !== undefined && available?.status === 'True') report.secretVersion = secretVersion;
  if (kubernetesSecret !== undefined) report.kubernetesSecret = kubernetesSecret;
  const currentVersion = text(status.data?.currentVersion);
  if (currentVersion !== undefined && available?.status === 'True') report.secretVersion = currentVersion;
  const previousVersion = text(status.data?.previousVersion);
  const previousGraceEndsAt = text(status.data?.previousGraceEndsAt);
  if (previousVersion !== undefined) report.previousVersion = previousVersion;
  if (previousGraceEndsAt !== undefined) report.previousGraceEndsAt = previousGraceEndsAt;
  const pin = pinOf(status.data);
  if (pin !== undefined) report.pin = pin;
  row.report = report;
  return row;
}

/**
 * Why a row is not simply fine, in words, or undefined when it is (provisioned and healthy at the
 * current generation): no report yet, a report for an older generation, a skip or a failure (the
 * adapter's own message), deletion in progress.
 */
export function explainRow(row: ClusterStatusRow): string | undefined {
  const report = row.report;
  if (report === undefined)
    return row.deleting
      ? 'being deleted; waiting for the adapter to clean up'
      : 'no status from the adapter yet';
  if (report.observedGeneration < row.generation)
    return `being updated: the last status is for generation ${report.observedGeneration}`;
  if (row.deleting)
    return report.finalized?.status === 'True'
      ? 'cleaned up; the API removes it shortly'
      : (report.finalized?.message ?? 'being deleted');
  if (report.available?.status === 'True' && report.health?.status !== 'False') return undefined;
  if (report.applied?.status !== 'True' && report.applied?.message !== undefined)
    return report.applied.message;
  if (report.health?.status === 'False' && report.health.message !== undefined) return report.health.message;
  return report.available?.message ?? 'not available';
}
