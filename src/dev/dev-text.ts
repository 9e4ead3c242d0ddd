import { join, resolve } from 'node:path';
import { formatStatusTable } from '../status-view/status-table.js';
import { renderTable } from '../util/table.js';
import type { ClusterStatusRow } from '../status-view/status-row.js';
import { DEFAULT_DEV_DATA_DIR, devPaths } from './data-dir.js';
import { countOutcomes, summaryRows, type DemoResult } from './demo.js';
import { formatDuration } from '../util/duration.js';
import type { DevStack } from './stack.js';
import { DEV_PORTS } from './stack.js';
import { HOLD_LABEL } from './upstream-adapters.js';

/** How the README runs the CLI after `npm run build`. */
export const CLI = 'node dist/cli/main.js';

/** The "where is everything" block printed when the stack is up. */
export function describeStack(stack: DevStack, logs: string): string {
  const { intervals, paths, urls } = stack;
  const rows = [
    ['HyperFleet API', `${urls.apiBase}  (stand-in; state in ${paths.apiState})`],
    [
      'Sentinel',
      `polls every ${formatDuration(intervals.pollIntervalMs)}; sends unreconciled clusters again after ` +
        `${formatDuration(intervals.debounceMs)}, reconciled ones after ${formatDuration(intervals.maxAgeMs)}`,
    ],
    ['Broker', 'embedded, in this process'],
    ['Adapter', `health ${urls.health}/healthz  metrics ${urls.metrics}`],
    [
      'Admin API',
      `${urls.admin}/api/pullsecret/admin/v1  (token file ${paths.adminTokens}, rotated by the adapter)`,
    ],
    ['Secret store', `local, encrypted: ${paths.store}`],
    ...(urls.account === undefined
      ? []
      : [['Account service', `${urls.account}  (stand-in; transfer checks once a minute per cluster)`]]),
    ['Kubernetes Secrets', `manifests in ${paths.manifests}`],
    [
      'Upstream adapters',
      `validation, dns and placement are simulated (label ${HOLD_LABEL}=dns holds one back)`,
    ],
    ['Logs', logs],
  ];
  return `The whole system on one machine (data directory ${paths.dataDir}):\n${indent(renderTable(rows))}`;
}

/** A `curl` that creates a cluster the adapter will provision (fake credentials `user:pass`). */
export function curlCreateCluster(apiBase: string, name = 'my-cluster'): string {
  const body = {
    kind: 'Cluster',
    name,
    spec: {
      provider: 'gcp',
      gcp: { projectId: 'my-project' },
      pullSecret: { data: { auths: { 'quay.io': { auth: 'dXNlcjpwYXNz' } } } },
    },
  };
  return `curl -s -X POST ${apiBase}/clusters -H 'content-type: application/json' \\\n  -d '${JSON.stringify(body)}'`;
}

/** What to try next, for a running stack (`apiUrl` set) or after the demo (default ports, `dataDir`). */
export function nextSteps(
  running: { apiUrl: string; apiBase: string; adminUrl?: string; adminTokens?: string } | undefined,
  dataDir = DEFAULT_DEV_DATA_DIR,
): string {
  const api = running?.apiUrl ?? `http://127.0.0.1:${DEV_PORTS.api}`;
  const apiBase = running?.apiBase ?? `${api}/api/hyperfleet/v1`;
  const dataOption = dataDir === DEFAULT_DEV_DATA_DIR ? '' : ` --data-dir ${dataDir}`;
  const lines =
    running === undefined
      ? [
          `Keep the whole stack running, with the demo's clusters (API on ${api}):`,
          `  ${CLI} dev${dataOption}`,
          '',
        ]
      : [];
  lines.push(
    'Create a cluster (the adapter provisions it within a second or two):',
    indent(curlCreateCluster(apiBase)),
    '',
    "See every cluster's pull secret status (any HyperFleet API; --output json for scripts):",
    `  ${CLI} status --api ${api}`,
  );
  lines.push(
    '',
    adminHowTo(
      running?.adminUrl ?? `http://127.0.0.1:${DEV_PORTS.admin}`,
      running?.adminTokens ?? devPaths(dataDir).adminTokens,
    ),
  );
  return lines.join('\n');
}

/** How to call the dev stack's admin API: with `curl` (token read from the token file) and with the CLI. */
export function adminHowTo(adminUrl: string, tokenFile: string): string {
  const token = `$(node -p 'require(process.argv[1]).current.token' ${resolve(tokenFile)})`;
  return [
    `Call the admin API (token in ${tokenFile}; docs/admin-api.md):`,
    `  curl -s -H "Authorization: Bearer ${token}" \\\n    ` +
      `'${adminUrl}/api/pullsecret/admin/v1/clusters?filter=failed'`,
    `  ${CLI} admin list --server ${adminUrl} --token-file ${tokenFile}`,
  ].join('\n');
}

/** Where the demo's results are on disk; names one manifest when a cluster was provisioned. */
export function whereDataIs(stack: DevStack, rows: readonly ClusterStatusRow[], logs: string): string {
  const { paths } = stack;
  const secret = rows.find((r) => r.report?.kubernetesSecret !== undefined)?.report?.kubernetesSecret;
  const manifest =
    secret === undefined ? undefined : join(paths.manifests, secret.namespace, `${secret.name}.yaml`);
  const table = [
    [
      'Kubernetes Secret manifests',
      manifest === undefined ? paths.manifests : `${paths.manifests}  (e.g. kubectl apply -f ${manifest})`,
    ],
    ['Secret store (encrypted)', paths.store],
    ['HyperFleet API state', paths.apiState],
    ['Logs (JSON lines)', logs],
  ];
  return `Where the data is:\n${indent(renderTable(table))}`;
}

/** Rows shown in the demo's summary table; `status` shows them all. */
const SUMMARY_ROWS = 20;

/**
 * The demo's ending: the summary table (with why the invalid and skipped clusters are not
 * provisioned), where the data is, and what to try next.
 */
export function demoSummary(
  stack: DevStack,
  result: DemoResult,
  logs: string,
  options: { exiting: boolean },
): string {
  const { shown, hidden } = summaryRows(result.rows, SUMMARY_ROWS);
  const more =
    hidden > 0 ? `\n(${hidden} more provisioned clusters are not listed; ${CLI} status shows every one)` : '';
  const parts = [
    `Summary after ${(result.elapsedMs / 1000).toFixed(1)} s: ${countOutcomes(result.rows)}${more}`,
    ...(result.transfer === undefined ? [] : [result.transfer]),
    '',
    formatStatusTable(shown),
    '',
    whereDataIs(stack, result.rows, logs),
    '',
    options.exiting
      ? nextSteps(undefined, stack.paths.dataDir)
      : nextSteps({
          apiUrl: stack.urls.api,
          apiBase: stack.urls.apiBase,
          adminUrl: stack.urls.admin,
          adminTokens: stack.paths.adminTokens,
        }),
  ];
  return `${parts.join('\n')}\n`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
