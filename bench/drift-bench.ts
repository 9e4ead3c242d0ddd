/**
 * Informer figures for `npm run bench` (issue 15): the adapter in this process with the embedded
 * broker, the local store, the HyperFleet API stand-in and the HTTPS Kubernetes API test server.
 * - drift repair: time from a managed Secret's deletion (behind the adapter's back) to its
 *   restoration, without any broker event (each run on another cluster, so the per-cluster
 *   back-off never applies); and Kubernetes API calls per no-op reconcile once the watch has listed;
 * - Job mode: time from a Job's completion (after its event's wait ended) to the status PUT that
 *   reports it;
 * - the Secret cache alone: time of its first list and heap per cached Secret (BENCH_DRIFT_CACHED,
 *   default 10,000 managed Secrets).
 * Asserts nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { KubeConfig } from '@kubernetes/client-node';
import { validateAdapterConfig } from '../src/adapter/config.js';
import { startAdapter, type RunningAdapter } from '../src/adapter/service.js';
import { startHyperFleetApiStandIn, type HyperFleetApiStandIn } from '../src/dev/hyperfleet-api/index.js';
import type { Cluster } from '../src/hyperfleet/index.js';
import { SecretCache } from '../src/kube/secret-cache.js';
import { createLogger } from '../src/observability/logger.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../test/servers/kubernetes/server.js';
import { CONDITIONS, PULL_SECRET } from './adapter-bench.js';
import { fmt, summarize } from './stats.js';

const RUNS = Number(process.env.BENCH_DRIFT_RUNS ?? 50);
const JOB_RUNS = Number(process.env.BENCH_DRIFT_JOB_RUNS ?? 20);
const JOB_NS = 'hyperfleet-system';

interface Rig {
  api: HyperFleetApiStandIn;
  kube: KubernetesTestServer;
  adapter: RunningAdapter;
  /** Time of the first report of each cluster whose Applied condition has the reason. */
  reported: Map<string, number>;
  clusters: Cluster[];
  dir: string;
}

async function until(probe: () => boolean, timeoutMs = 30_000): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!probe()) {
    if (performance.now() > deadline) return false;
    await sleep(1);
  }
  return true;
}

async function rig(n: number, mode: 'in-process' | 'job', reason: string): Promise<Rig> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-drift-bench-'));
  const reported = new Map<string, number>();
  const api = await startHyperFleetApiStandIn({
    onReport: (id, report) => {
      if (report.conditions.some((c) => c.type === 'Applied' && c.reason === reason) && !reported.has(id))
        reported.set(id, performance.now());
    },
  });
  const kube = await startKubernetesTestServer({ namespaces: [JOB_NS] });
  const config = validateAdapterConfig({
    hyperfleetApi: { baseUrl: api.url, timeoutMs: 5000 },
    broker: { type: 'embedded', maxInFlight: 64, retryDelayMs: 10, retryMaxDelayMs: 50 },
    store: { type: 'local', settings: { dir: join(dir, 'store') } },
    kubernetes: { target: 'api', kubeconfig: kube.kubeconfigPath },
    execution: {
      mode,
      concurrency: 16,
      ...(mode === 'job'
        ? { job: { namespace: JOB_NS, image: 'pull-secret:bench', timeoutSeconds: 600, waitSeconds: 1 } }
        : {}),
    },
    server: { healthPort: 0, metricsPort: 0, host: '127.0.0.1', drainSeconds: 2 },
  });
  const quiet = new Writable({ write: (_chunk, _enc, done) => done() });
  const adapter = await startAdapter(config, createLogger({ level: 'error', destination: quiet }));
  const clusters: Cluster[] = [];
  for (let i = 0; i < n; i++) {
    const cluster = await api.seedCluster({
      kind: 'Cluster',
      name: `drift-${i}`,
      generation: 1,
      spec: { provider: 'gcp', gcp: { projectId: 'bench-project' }, pullSecret: { data: PULL_SECRET } },
      status: { conditions: CONDITIONS },
    });
    kube.createNamespace(`clusters-${cluster.id}`);
    clusters.push(cluster);
    await adapter.broker.publish(
      Buffer.from(
        JSON.stringify({
          specversion: '1.0',
          id: `drift-${i}`,
          source: 'bench',
          type: 'com.redhat.hyperfleet.cluster.reconcile',
          data: { id: cluster.id, kind: 'Cluster', generation: 1 },
        }),
      ),
    );
  }
  return { api, kube, adapter, reported, clusters, dir };
}

async function close(r: Rig): Promise<void> {
  await r.adapter.stop();
  await r.kube.close();
  await r.api.stop();
  await rm(r.dir, { recursive: true, force: true });
}

/** Deletion → restoration, and API calls of a no-op once synced. */
async function driftRows(): Promise<string[][]> {
  const r = await rig(RUNS, 'in-process', 'SecretCreated');
  try {
    if (!(await until(() => r.reported.size === RUNS, 60_000)))
      return [['drift repair', 'failed: clusters not provisioned', '', '']];
    await sleep(200);
    const secretOf = (c: Cluster) => r.kube.getObject('secrets', `clusters-${c.id}`, `${c.id}-pull-secret`);
    const times: number[] = [];
    for (const cluster of r.clusters) {
      const t0 = performance.now();
      r.kube.deleteObject('secrets', `clusters-${cluster.id}`, `${cluster.id}-pull-secret`);
      if (await until(() => secretOf(cluster) !== undefined, 10_000)) times.push(performance.now() - t0);
    }
    // A no-op reconcile of every cluster once the watch has listed: Kubernetes calls per reconcile.
    r.kube.resetCalls();
    for (const [i, cluster] of r.clusters.entries()) {
      await r.adapter.broker.publish(
        Buffer.from(
          JSON.stringify({
            specversion: '1.0',
            id: `noop-${i}`,
            source: 'bench',
            type: 'com.redhat.hyperfleet.cluster.reconcile',
            data: { id: cluster.id, kind: 'Cluster', generation: 1 },
          }),
        ),
      );
    }
    await sleep(1000);
    const calls = r.kube.requests().filter((q) => q.method !== 'WATCH').length / r.clusters.length;
    const s = summarize(times);
    return [
      [
        `drift repair: Secret deleted → restored, p50 / p99 (N=${times.length} of ${RUNS})`,
        `${fmt(s.p50, 1)} / ${fmt(s.p99, 1)}`,
        'ms',
        'p99 ≤ 2000',
      ],
      ['Kubernetes API calls per no-op reconcile (watch synced)', fmt(calls, 2), 'calls', '0'],
    ];
  } finally {
    await close(r);
  }
}

/** Job completion (after the event's wait) → status PUT. */
async function jobRows(): Promise<string[][]> {
  const r = await rig(JOB_RUNS, 'job', 'JobSucceeded');
  try {
    const jobOf = (c: Cluster) => `pullsecret-${c.id}-gen1`;
    // The events' waits end (1 s) with JobInProgress; the Jobs are stored, not run.
    const progress = () =>
      r.clusters.every((c) =>
        r.api
          .listStatuses(c.id)
          .some((s) => s.conditions.some((x) => x.type === 'Applied' && x.reason === 'JobInProgress')),
      );
    if (!(await until(progress, 60_000)))
      return [['Job completion → status PUT', 'failed: no JobInProgress', '', '']];
    const times: number[] = [];
    for (const cluster of r.clusters) {
      const t0 = performance.now();
      r.kube.setJobStatus(JOB_NS, jobOf(cluster), {
        succeeded: 1,
        active: 0,
        conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: new Date().toISOString() }],
      });
      if (await until(() => r.reported.has(cluster.id), 10_000))
        times.push((r.reported.get(cluster.id) ?? 0) - t0);
    }
    const s = summarize(times);
    return [
      [
        `Job mode: Job complete → status PUT, p50 / p99 (N=${times.length} of ${JOB_RUNS})`,
        `${fmt(s.p50, 1)} / ${fmt(s.p99, 1)}`,
        'ms',
        'p99 ≤ 5000',
      ],
    ];
  } finally {
    await close(r);
  }
}

const CACHED = Number(process.env.BENCH_DRIFT_CACHED ?? 10_000);

/** A full collection, for heap figures (the flag is set at run time; no Node option needed). */
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Heap held by the Secret cache per managed Secret, and the time of its first list (pages of 500). */
async function cacheRows(): Promise<string[][]> {
  const kube = await startKubernetesTestServer();
  const cache = { value: undefined as SecretCache | undefined };
  try {
    const data = { '.dockerconfigjson': Buffer.from(PULL_SECRET).toString('base64') };
    for (let i = 0; i < CACHED; i++) {
      const id = `0194${String(i).padStart(4, '0')}-8f8e-7abc-9def-0123456789ab`;
      kube.seed({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: `${id}-pull-secret`,
          namespace: `clusters-${id}`,
          labels: { 'managed-by': 'hyperfleet', 'cluster-id': id },
        },
        type: 'kubernetes.io/dockerconfigjson',
        data,
      });
    }
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kube.kubeconfigPath);
    collect();
    const before = process.memoryUsage().heapUsed;
    const started = performance.now();
    cache.value = new SecretCache({ kubeConfig });
    cache.value.start();
    await until(() => cache.value?.synced === true, 120_000);
    const listMs = performance.now() - started;
    collect();
    const perSecret = (process.memoryUsage().heapUsed - before) / Math.max(1, cache.value.size);
    return [
      [`informer: first list of ${cache.value.size} managed Secrets`, fmt(listMs, 0), 'ms', ''],
      ['informer: heap per cached Secret (no payload kept)', fmt(perSecret, 0), 'bytes', ''],
      [
        `informer: heap of the cache, ${cache.value.size} Secrets`,
        fmt((perSecret * cache.value.size) / 1e6, 1),
        'MB',
        'adapter ≤ 200 MB RSS with 10,000',
      ],
    ];
  } finally {
    await cache.value?.stop();
    await kube.close();
  }
}

/** Runs the informer benchmarks; rows are `[name, value, unit, target]`. */
export async function benchDrift(): Promise<string[][]> {
  return [...(await driftRows()), ...(await jobRows()), ...(await cacheRows())];
}
