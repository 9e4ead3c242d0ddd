import { renderTable } from '../util/table.js';
import { explainRow, type ClusterStatusRow, type ConditionView } from './status-row.js';

interface TableOptions {
  /**
   * Full cluster ids (an ID column, and unabridged Kubernetes Secret names), the previous version
   * with the end of its grace, and the rollback pin.
   */
  wide?: boolean;
}

const NONE = '-';

function cell(view: ConditionView | undefined): string {
  if (view === undefined) return NONE;
  return view.reason === undefined ? view.status : `${view.status} ${view.reason}`;
}

/**
 * `019466a0-8f8e-7abc-9def-0123456789ab` → `…456789ab`: the random tail, since UUIDv7s made in the same
 * millisecond share their head. The id stays recognisable, the column narrow.
 */
function abridge(text: string, id: string): string {
  return id.length > 12 ? text.split(id).join(`…${id.slice(-8)}`) : text;
}

function generationCell(row: ClusterStatusRow): string {
  const observed = row.report?.observedGeneration;
  const base =
    observed === undefined || observed === row.generation
      ? String(row.generation)
      : `${row.generation} (seen ${observed})`;
  return row.deleting ? `${base} deleting` : base;
}

/** The PIN column: the restored version, and until when (`v2 until 2026-…`), or `-`. */
function pinCell(pin: { sourceVersion: string; expiresAt?: string } | undefined): string {
  if (pin === undefined) return NONE;
  return pin.expiresAt === undefined
    ? `v${pin.sourceVersion}`
    : `v${pin.sourceVersion} until ${pin.expiresAt}`;
}

/**
 * The `pull-secret status` table: one line per cluster (name, generation, Applied / Available / Health
 * with reasons, secret version, Kubernetes Secret), then a "why" line for every cluster that is not
 * provisioned and healthy, in the adapter's own words. Pure.
 */
export function formatStatusTable(rows: readonly ClusterStatusRow[], options: TableOptions = {}): string {
  if (rows.length === 0) return 'No clusters.';
  const header = [
    ...(options.wide === true ? ['ID'] : []),
    'CLUSTER',
    'GEN',
    'APPLIED',
    'AVAILABLE',
    'HEALTH',
    'VERSION',
    ...(options.wide === true ? ['PREVIOUS', 'GRACE ENDS', 'PIN'] : []),
    'KUBERNETES SECRET',
  ];
  const body = rows.map((row) => {
    const report = row.report;
    const k8s =
      report?.kubernetesSecret === undefined
        ? NONE
        : `${report.kubernetesSecret.namespace}/${report.kubernetesSecret.name}`;
    return [
      ...(options.wide === true ? [row.id] : []),
      row.name,
      generationCell(row),
      cell(report?.applied),
      cell(report?.available),
      cell(report?.health),
      report?.secretVersion ?? NONE,
      ...(options.wide === true
        ? [report?.previousVersion ?? NONE, report?.previousGraceEndsAt ?? NONE, pinCell(report?.pin)]
        : []),
      options.wide === true ? k8s : abridge(k8s, row.id),
    ];
  });
  const reasons = rows.flatMap((row) => {
    const why = explainRow(row);
    return why === undefined ? [] : [[row.name, why]];
  });
  const table = renderTable(body, { header });
  if (reasons.length === 0) return table;
  return `${table}\n\nWhy some clusters are not provisioned:\n${renderTable(reasons, { indent: '  ' })}`;
}

/** The JSON form (`--output json`): `{ clusters: [...] }`, stable field names, two-space indented. */
export function formatStatusJson(rows: readonly ClusterStatusRow[]): string {
  return JSON.stringify({ clusters: rows }, null, 2);
}
