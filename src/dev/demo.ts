import { createProgress, type ProgressStream } from '../observability/progress.js';
import { toStatusRow, type ClusterStatusRow } from '../status-view/status-row.js';
import { createClusters, demoClusters } from './demo-clusters.js';
import { formatDuration } from '../util/duration.js';
import { renderTable } from '../util/table.js';
import {
  describeDemoTransfer,
  openDemoTransfer,
  TRANSFER_CLUSTER_NAME,
  transferClusterRequest,
} from './demo-transfer.js';
import {
  pullSecretStatus,
  reportedOnCurrentGeneration,
  waitUntilSettled,
  type SettledWhen,
} from './settle.js';
import type { DevStack } from './stack.js';

export interface DemoOptions {
  /** Valid sample clusters (besides the invalid and the skipped one). */
  validClusters: number;
  /** How long to wait for every status (ms). */
  timeoutMs: number;
  /** Where the narration goes (one block of text per call). */
  say: (text: string) => void;
  /** Where progress goes (default stderr). */
  progress?: ProgressStream;
  /** Stops the waiting (the result then says which clusters are pending). */
  signal?: AbortSignal;
}

export interface DemoResult {
  settled: boolean;
  /** One row per demo cluster, in creation order. */
  rows: ClusterStatusRow[];
  /** Names of the clusters still without a status at the timeout. */
  pending: string[];
  /** From the first POST to the last status (or the timeout). */
  elapsedMs: number;
  /**
   * The ownership transfer line (registry names, replaced or kept; never a credential), with the
   * account-service stand-in.
   */
  transfer?: string;
}

/** Above this many clusters the narration stops listing them one by one. */
const LIST_LIMIT = 10;

/**
 * The demo: creates sample clusters through the stack's API (valid ones, one with an invalid pull
 * secret, one held back by its dns adapter), then waits until the adapter has reported on each one's
 * current generation, showing progress. The stack's Sentinel does the rest, as in production.
 *
 * @throws PullSecretError when the API refuses a cluster (API_REQUEST_INVALID) or cannot be reached
 */
export async function runDemo(stack: DevStack, options: DemoOptions): Promise<DemoResult> {
  const requests = demoClusters(options.validClusters);
  // With the account-service stand-in: one more cluster, which changes owner.
  if (stack.account !== undefined) requests.push(transferClusterRequest());
  const special = requests.slice(options.validClusters);
  const listed = requests.length <= LIST_LIMIT ? requests : [requests[0], ...special];
  const width = Math.max(...requests.map((r) => r.name.length));
  const shown = listed.flatMap((r) => (r === undefined ? [] : [[r.name, r.expect]]));
  const lines = renderTable(shown, { indent: '  ', minWidths: [width] }).split('\n');
  if (requests.length > LIST_LIMIT)
    lines.splice(1, 0, `  … and ${options.validClusters - 1} more like ${requests[0]?.name ?? ''}`);
  options.say(
    `Creating ${requests.length} sample clusters through the API (POST /clusters):\n${lines.join('\n')}`,
  );
  const started = performance.now();

  const creating =
    requests.length > LIST_LIMIT
      ? createProgress({ label: 'Clusters created', total: requests.length, stream: options.progress })
      : undefined;
  // The transfer cluster first, its transfer opened at once: its first check (right after its first event) finds it.
  const account = stack.account;
  const firstBatch =
    account === undefined ? [] : await createClusters(stack.urls.apiBase, requests.slice(-1));
  const transferCluster = firstBatch[0];
  if (account !== undefined && transferCluster !== undefined) openDemoTransfer(account, transferCluster.id);
  const rest = await createClusters(
    stack.urls.apiBase,
    account === undefined ? requests : requests.slice(0, -1),
    {
      concurrency: 16,
      onCreated: (done) => creating?.update(done + firstBatch.length),
    },
  );
  const clusters = [...rest, ...firstBatch];
  creating?.finish();

  options.say(
    [
      `The Sentinel polls the API every ${formatDuration(stack.intervals.pollIntervalMs)} and publishes ` +
        `a reconcile event for each new cluster.`,
      'For each event the adapter reads the cluster, checks its preconditions, stores the pull secret in the',
      'local encrypted store, writes the Kubernetes Secret manifest, and reports Applied/Available/Health.',
      ...(transferCluster === undefined
        ? []
        : [
            `The account service (stand-in) holds an accepted ownership transfer for ` +
              `${TRANSFER_CLUSTER_NAME}: the adapter's transfer check merges it in.`,
          ]),
    ].join('\n'),
  );
  const ids = clusters.map((c) => c.id);
  const progress = createProgress({
    label: 'Clusters with a status',
    total: ids.length,
    stream: options.progress,
  });
  // The transfer cluster is settled once its report carries the applied transfer.
  const settledWhen: SettledWhen = (cluster, status) =>
    reportedOnCurrentGeneration(cluster, status) &&
    (cluster?.id !== transferCluster?.id || status?.data?.transferId !== undefined);
  const outcome = await waitUntilSettled(stack.api, ids, settledWhen, {
    timeoutMs: options.timeoutMs,
    onProgress: (done) => progress.update(done),
    signal: options.signal,
  });
  progress.finish(
    outcome.settled ? undefined : options.signal?.aborted === true ? 'interrupted' : 'timed out',
  );

  const rows = clusters.map((created) => {
    const cluster = stack.api.getCluster(created.id) ?? created;
    return toStatusRow(cluster, pullSecretStatus(stack.api, created.id));
  });
  const pendingIds = new Set(outcome.pending);
  const transfer =
    transferCluster === undefined
      ? undefined
      : await describeDemoTransfer(stack.paths.store, transferCluster.id);
  return {
    settled: outcome.settled,
    rows,
    pending: clusters.filter((c) => pendingIds.has(c.id)).map((c) => c.name),
    elapsedMs: performance.now() - started,
    ...(transfer === undefined ? {} : { transfer }),
  };
}

/** `N clusters: x provisioned, y failed, z skipped, w without a status`. */
export function countOutcomes(rows: readonly ClusterStatusRow[]): string {
  let provisioned = 0;
  let skipped = 0;
  let failed = 0;
  let waiting = 0;
  for (const row of rows) {
    const report = row.report;
    if (report === undefined || report.observedGeneration < row.generation) waiting += 1;
    else if (report.available?.status === 'True') provisioned += 1;
    else if (report.applied?.reason === 'PreconditionNotMet') skipped += 1;
    else failed += 1;
  }
  const parts = [
    `${provisioned} provisioned`,
    `${failed} failed`,
    `${skipped} skipped`,
    ...(waiting > 0 ? [`${waiting} without a status`] : []),
  ];
  return `${rows.length} clusters: ${parts.join(', ')}`;
}

/**
 * The rows worth showing in a summary: every one that is not fine, then fine ones up to `limit` rows
 * in all; `hidden` says how many were left out.
 */
export function summaryRows(
  rows: readonly ClusterStatusRow[],
  limit: number,
): { shown: ClusterStatusRow[]; hidden: number } {
  if (rows.length <= limit) return { shown: [...rows], hidden: 0 };
  const fine = (r: ClusterStatusRow) =>
    r.report?.available?.status === 'True' && r.report.observedGeneration === r.generation;
  const notFine = rows.filter((r) => !fine(r));
  const shown = [...rows.filter(fine).slice(0, Math.max(limit - notFine.length, 3)), ...notFine];
  return { shown, hidden: rows.length - shown.length };
}
