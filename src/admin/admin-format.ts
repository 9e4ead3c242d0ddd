import { renderTable } from '../util/table.js';
import type { ConditionView, ReportView } from '../status-view/status-row.js';
import type {
  ClusterView,
  ReconcileView,
  ReleaseView,
  RollbackView,
  TransferCheckView,
} from './admin-service.js';

/** One line of `GET clusters` (the summary the server sends). */
interface ClusterSummary {
  id: string;
  name: string;
  generation: number;
  state: string;
  explanation?: string;
  report?: ReportView;
}

const NONE = '-';
const cell = (v: ConditionView | undefined) =>
  v === undefined ? NONE : v.reason === undefined ? v.status : `${v.status} ${v.reason}`;

/** `pull-secret admin list` as a table: id, name, generation, state, conditions, then why (when not healthy). Pure. */
export function formatClusterList(items: readonly ClusterSummary[]): string {
  if (items.length === 0) return 'No clusters.';
  const rows = items.map((i) => [
    i.id,
    i.name,
    String(i.generation),
    i.state,
    cell(i.report?.applied),
    cell(i.report?.available),
    cell(i.report?.health),
    i.explanation ?? '',
  ]);
  return renderTable(rows, {
    header: ['ID', 'CLUSTER', 'GEN', 'STATE', 'APPLIED', 'AVAILABLE', 'HEALTH', 'WHY'],
  });
}

/**
 * `pull-secret admin get` as aligned fields and the store's versions (never a payload: the server sends none). Pure.
 */
export function formatClusterView(view: ClusterView): string {
  const report = view.report;
  const fields: Array<[string, string]> = [
    ['Cluster', `${view.name} (${view.id})`],
    [
      'Generation',
      report === undefined
        ? String(view.generation)
        : `${view.generation} (last report for ${report.observedGeneration})`,
    ],
    ['State', view.explanation === undefined ? view.state : `${view.state}: ${view.explanation}`],
    ['Applied', cell(report?.applied)],
    ['Available', cell(report?.available)],
    ['Health', cell(report?.health)],
    ['Store', `${view.store.kind} ${view.store.path ?? view.store.secretId ?? NONE}`],
    [
      'Kubernetes Secret',
      view.kubernetesSecret === undefined
        ? NONE
        : `${view.kubernetesSecret.namespace}/${view.kubernetesSecret.name}`,
    ],
  ];
  if (view.store.error !== undefined)
    fields.push(['Store error', `${view.store.error.code}: ${view.store.error.message}`]);
  const lines = [
    renderTable(
      fields.map(([k, v]) => [`${k}:`, v]),
      { separator: ' ' },
    ),
  ];
  const versions = view.store.versions ?? [];
  if (versions.length > 0)
    lines.push(
      '',
      renderTable(
        versions.map((v) => [v.version, v.state, v.createdTime]),
        { header: ['VERSION', 'STATE', 'CREATED'] },
      ),
    );
  return lines.join('\n');
}

/** `pull-secret admin reconcile`: the result and the status the reconcile reported. Pure. */
export function formatReconcile(view: ReconcileView): string {
  const head = `Reconcile of ${view.id} (generation ${view.generation}): ${view.result}`;
  if (view.report === undefined) return head;
  return [
    head,
    `State: ${view.state ?? NONE}${view.explanation === undefined ? '' : `: ${view.explanation}`}`,
    `Applied: ${cell(view.report.applied)}  Available: ${cell(view.report.available)}  Health: ` +
      `${cell(view.report.health)}`,
  ].join('\n');
}

/** `pull-secret admin transfer-check`: the decision of the check (names and reasons only). Pure. */
export function formatTransferCheck(view: TransferCheckView): string {
  const head = `Transfer check of ${view.id}: ${view.result}${view.outcome === undefined ? '' : ` (${view.outcome}, ${view.reason ?? NONE})`}`;
  const lines = [head];
  if (view.transferId !== undefined)
    lines.push(
      `Transfer: ${view.transferId}${view.appliedAt === undefined ? '' : ` applied at ${view.appliedAt}`}`,
    );
  if (view.replaced !== undefined || view.added !== undefined)
    lines.push(`Replaced: ${view.replaced?.join(', ') || NONE}  Added: ${view.added?.join(', ') || NONE}`);
  if (view.message !== undefined) lines.push(view.message);
  return lines.join('\n');
}

/** `pull-secret admin rollback`: which version was restored as which, and the Kubernetes Secret. Pure. */
export function formatRollback(view: RollbackView): string {
  const k8s =
    view.kubernetesSecret === undefined
      ? ''
      : `\nKubernetes Secret ${view.kubernetesSecret.namespace}/${view.kubernetesSecret.name}: ` +
        `${view.kubernetesSecret.outcome}`;
  const pin =
    view.pin === undefined
      ? '\nNot pinned: the next reconcile serves the spec again'
      : `\nPinned by ${view.pin.by} at ${view.pin.at}` +
        `${view.pin.expiresAt === undefined ? '' : ` until ${view.pin.expiresAt}`}` +
        `${view.pin.reason === undefined ? '' : `: ${view.pin.reason}`}`;
  return (
    `Rollback of ${view.id}: version ${view.restoredVersion} restored as version ` +
    `${view.version ?? NONE} (${view.outcome}); was ${view.fromVersion}${k8s}${pin}`
  );
}

/** `pull-secret admin rollback --release`: whether a pin ended, and the reconcile that followed. Pure. */
export function formatRelease(view: ReleaseView): string {
  return view.released
    ? `Rollback pin of ${view.id} released; reconcile: ${view.reconcile ?? NONE}`
    : `Cluster ${view.id} had no rollback pin: nothing changed`;
}
