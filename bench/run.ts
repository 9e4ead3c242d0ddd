/**
 * `npm run bench`: job runs per second, start-up time and peak memory of the pull secret job, on the
 * local store and on the GCP Secret Manager test server (through the real SDK), plus in-process push
 * throughput, the start-up of the CLI and the size of the image's runtime layout. Prints a table; asserts
 * nothing (targets are listed next to the figures). BENCH_JOB_ONLY=1 stops after the job table.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { benchProcesses, type ProcessRuns } from './job-processes.js';
import { fmt, summarize } from './stats.js';
import { startSecretManagerTestServer } from '../test/servers/gcp-secret-manager/index.js';
import { startKubernetesTestServer } from '../test/servers/kubernetes/server.js';
import { LocalStore, localStoreFactory } from '../src/stores/local/index.js';
import { gcpStoreFactory } from '../src/stores/gcp-secret-manager/index.js';
import { pushSecret } from '../src/stores/push.js';
import { managedLabels } from '../src/pullsecret/identifiers.js';
import type { SecretStore } from '../src/stores/store.js';
import { storeCallRows } from './store-calls.js';
import { benchKubernetes } from './kube-bench.js';
import { JOB_DEFAULTS } from '../src/kube/job-manifest.js';
import { benchAdapter, node22 as node22Binary, type AdapterPath } from './adapter-bench.js';
import { benchEndToEnd } from './e2e-bench.js';
import { benchQuota } from './quota-bench.js';
import { benchAwsStore } from './aws-store-bench.js';
import { benchAzureStore } from './azure-store-bench.js';
import { benchAdmin } from './admin-bench.js';
import { benchVerification } from './verification-bench.js';
import { imageLayoutSize, LAYOUT_TARGET_MB } from './image-layout.js';

process.env.METADATA_SERVER_DETECTION = 'none';
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const PUSHES = Number(process.env.BENCH_PUSHES ?? 2000);
const PULL_SECRET = readFileSync(new URL('../examples/pull-secret.json', import.meta.url), 'utf8').trim();
const rows: string[][] = [];

function processRow(name: string, r: ProcessRuns, target = ''): void {
  rows.push([
    name,
    fmt(r.runsPerSecond),
    fmt(r.wallMs.p50, 0),
    fmt(r.wallMs.p95, 0),
    fmt(r.peakRssMb),
    String(r.failures),
    target,
  ]);
}

async function pushThroughput(store: SecretStore, label: string): Promise<void> {
  const labels = managedLabels('cls-bench-push');
  const request = {
    secretId: 'hyperfleet-cls-bench-push-pull-secret',
    labels,
    payload: Buffer.from(PULL_SECRET),
  };
  const retry = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100 };
  await pushSecret(store, request, { retry });
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < PUSHES; i++) {
    const t0 = performance.now();
    await pushSecret(store, request, { retry });
    times.push(performance.now() - t0);
  }
  const perSecond = (PUSHES * 1000) / (performance.now() - started);
  const s = summarize(times);
  rows.push([`in-process no-op push, ${label}`, fmt(perSecond), fmt(s.p50, 2), fmt(s.p95, 2), '-', '0', '']);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-bench-'));
  const server = await startSecretManagerTestServer({ project: 'bench-project' });
  try {
    // Job processes run with the NODE_OPTIONS a Job pod gets (JOB_DEFAULTS.nodeOptions).
    const base = {
      PATH: process.env.PATH,
      METADATA_SERVER_DETECTION: 'none',
      PULL_SECRET_DATA: PULL_SECRET,
      NODE_OPTIONS: JOB_DEFAULTS.nodeOptions,
    };
    const local = { ...base, LOCAL_STORE_DIR: join(dir, 'store'), CLUSTER_ID: 'cls-bench' };
    const gcp = {
      ...base,
      SECRET_STORE: 'gcp',
      GCP_PROJECT_ID: 'bench-project',
      SECRET_MANAGER_ENDPOINT: server.address,
      SECRET_MANAGER_INSECURE: 'true',
      CLUSTER_ID: 'cls-bench',
    };
    const rss = join(dir, 'rss');

    processRow(
      'start-up: pull-secret --version',
      await benchProcesses(['--version'], base, RUNS, rss),
      '< 400 ms',
    );
    // The CLI on the image's runtime: --version and --help load no command's dependencies.
    const startNode22 = node22Binary();
    if (startNode22 !== undefined) {
      processRow(
        'start-up: pull-secret --version, Node.js 22',
        await benchProcesses(['--version'], base, RUNS, rss, startNode22),
        '<= 100 ms, <= 50 MB',
      );
      processRow(
        'start-up: pull-secret --help, Node.js 22',
        await benchProcesses(['--help'], base, RUNS, rss, startNode22),
        '<= 100 ms, <= 50 MB',
      );
    }
    processRow(
      'job, local store, first run (create)',
      await benchProcesses(
        ['run-job', 'pull-secret'],
        { ...local, CLUSTER_ID: 'cls-bench-first', LOCAL_STORE_DIR: join(dir, 'first') },
        1,
        rss,
      ),
    );
    processRow(
      'job, local store, no-op run',
      await benchProcesses(['run-job', 'pull-secret'], local, RUNS, rss),
      '< 400 ms, < 80 MB',
    );
    processRow(
      'job, GCP test server, no-op run',
      await benchProcesses(['run-job', 'pull-secret'], gcp, RUNS, rss),
      '< 80 MB',
    );
    // As users run the image: its ENV (NODE_ENV, and the NODE_OPTIONS the Dockerfile sets), no other flag.
    const imageNodeOptions = /\bNODE_OPTIONS=(\S+)/.exec(
      readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8'),
    )?.[1];
    const imageDefaults = { ...gcp, NODE_ENV: 'production', NODE_OPTIONS: imageNodeOptions };
    processRow(
      "job, GCP test server, no-op run, image's defaults",
      await benchProcesses(['run-job', 'pull-secret'], imageDefaults, RUNS, rss),
      '< 400 ms, < 80 MB',
    );
    // The image runs Node.js 22 (Dockerfile): the same row on the Node.js 22 that `npm run test:setup` installs, when present.
    const node22 = node22Binary();
    if (node22 !== undefined)
      processRow(
        "job, GCP test server, no-op run, image's defaults, Node.js 22",
        await benchProcesses(['run-job', 'pull-secret'], imageDefaults, RUNS, rss, node22),
        '< 400 ms, < 80 MB',
      );
    // What a Job pod of the adapter's Job mode runs: the same job also writing the Kubernetes Secret through the API (HTTPS).
    const kube = await startKubernetesTestServer({ namespaces: ['clusters-cls-bench'] });
    try {
      const jobPod = {
        ...imageDefaults,
        MANAGEMENT_NAMESPACE: 'clusters-cls-bench',
        KUBECONFIG: kube.kubeconfigPath,
      };
      await benchProcesses(['run-job', 'pull-secret'], jobPod, 1, rss); // the first run creates the Secret
      processRow(
        "job, GCP + Kubernetes API test servers, no-op run, image's defaults",
        await benchProcesses(['run-job', 'pull-secret'], jobPod, RUNS, rss),
        '< 400 ms, < 80 MB',
      );
      if (node22 !== undefined)
        processRow(
          "job, GCP + Kubernetes API test servers, no-op run, image's defaults, Node.js 22",
          await benchProcesses(['run-job', 'pull-secret'], jobPod, RUNS, rss, node22),
          '< 400 ms, < 80 MB',
        );
    } finally {
      await kube.close();
    }
    server.resetCalls();
    const gcpCalls = (await benchProcesses(['run-job', 'pull-secret'], gcp, 1, rss), server.totalCalls);

    const localStore = new LocalStore({ dir: join(dir, 'push') });
    await pushThroughput(localStore, 'local store');
    await localStore.close();
    const gcpStore = await gcpStoreFactory.create({
      projectId: 'bench-project',
      endpoint: server.address,
      insecure: true,
      callTimeoutMs: 5000,
    });
    await pushThroughput(gcpStore, 'GCP test server');
    await gcpStore.close();

    const header = ['benchmark', 'runs/s', 'p50 ms', 'p95 ms', 'peak RSS MB', 'failures', 'target'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
    const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
    console.log(
      `\nPull secret job benchmarks (${RUNS} process runs each with NODE_OPTIONS=${JOB_DEFAULTS.nodeOptions} as in a Job pod, ${PUSHES} in-process pushes; node ${process.version})\n`,
    );
    console.log(line(header));
    console.log(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const r of rows) console.log(line(r));
    console.log(
      `\nSecret Manager calls made by one no-op job run: ${gcpCalls} (target 1: one access of the newest version)`,
    );
    const layout = await imageLayoutSize();
    console.log(
      `Image runtime layout (scripts/assemble-image-layout.mjs): ${fmt(layout.mb)} MB in ${layout.files} files added to the base image (target <= ${LAYOUT_TARGET_MB} MB)`,
    );
    if (process.env.BENCH_JOB_ONLY === '1') return;
    const callRows = [
      ...(await storeCallRows('local store', PULL_SECRET, (hooks) =>
        localStoreFactory.create(localStoreFactory.configSchema.parse({ dir: join(dir, 'calls') }), hooks),
      )),
      ...(await storeCallRows('GCP test server', PULL_SECRET, (hooks) =>
        gcpStoreFactory.create(
          { projectId: 'bench-project', endpoint: server.address, insecure: true, callTimeoutMs: 5000 },
          hooks,
        ),
      )),
    ];
    printSection(
      'Local and GCP Secret Manager stores: calls per push (in process, counted at the store edge)',
      callRows,
    );
    printSection(
      `AWS Secrets Manager store (in process, through the real SDK against the test server)`,
      await benchAwsStore(),
    );
    printSection(
      'Azure Key Vault store (test server over HTTPS, real SDK and workload identity credential)',
      await benchAzureStore(PUSHES),
    );
    printSection(
      'Kubernetes Secret writes (KubernetesSecretWriter against the Kubernetes API test server)',
      (await benchKubernetes()).rows,
    );
    printSection(
      'Store path under Secret Manager quotas (StoreProvider, GCP client, test server with quotas; BENCH_QUOTA_CLUSTERS, BENCH_QUOTA_WINDOW_MS)',
      await benchQuota(),
    );
    const sizes = (process.env.BENCH_ADAPTER_SIZES ?? '1000,10000').split(',').map(Number);
    const paths = (process.env.BENCH_ADAPTER_PATHS ?? 'embedded,production').split(',') as AdapterPath[];
    const adapterRows: string[][] = [];
    for (const n of sizes) for (const path of paths) adapterRows.push(...(await benchAdapter(n, path)));
    // The production path also on Node.js 22, the image's runtime (when `npm run test:setup` installed it), at the first size.
    const adapterNode22 = node22Binary();
    if (adapterNode22 !== undefined && paths.includes('production'))
      adapterRows.push(...(await benchAdapter(sizes[0] ?? 1000, 'production', adapterNode22, 'Node.js 22')));
    printSection(
      'Adapter on the embedded broker: embedded path (local store, manifests), production path (GCP and Kubernetes API test servers)',
      adapterRows,
    );
    const e2eRows: string[][] = [];
    for (const n of (process.env.BENCH_E2E_SIZES ?? '100,1000').split(',').map(Number))
      e2eRows.push(...(await benchEndToEnd(n)));
    printSection(
      'End to end: clusters created through the API until all report Available=True (dev stack)',
      e2eRows,
    );
    printSection(
      'Informer: drift repair and Job reports (adapter in-process, local store, Kubernetes API test server)',
      await (await import('./drift-bench.js')).benchDrift(),
    );
    printSection(
      'Admin API on loopback (adapter, local store, API stand-in; BENCH_ADMIN_READS, BENCH_ADMIN_CHECKS)',
      await benchAdmin(),
    );
    printSection(
      'Transfer checks, window closed (adapter fleet schedule, account-service and API stand-ins; BENCH_TRANSFER_CLUSTERS, BENCH_TRANSFER_RATE)',
      await (await import('./transfer-bench.js')).benchTransfers(),
    );
    printSection(
      'Registry verification of new pull secrets (docker-registry on loopback with TLS, cache off; BENCH_VERIFY_RUNS)',
      await benchVerification(),
    );
    printSection(
      'PullSecretShares: one share to BENCH_SHARE_NAMESPACES namespaces (share controller, Kubernetes API test server)',
      await (await import('./shares-bench.js')).benchShares(),
    );
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Prints rows `[name, value, unit, target]` as an aligned table under a heading. */
function printSection(title: string, sectionRows: string[][]): void {
  const header = ['benchmark', 'value', 'unit', 'target'];
  const widths = header.map((h, i) => Math.max(h.length, ...sectionRows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  console.log(`\n${title}\n`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of sectionRows) console.log(line(r));
}

await main();
