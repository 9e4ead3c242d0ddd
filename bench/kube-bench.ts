/**
 * Kubernetes figures for `npm run bench`, against the HTTPS Kubernetes API test server through the
 * real client: Secrets provisioned per second by KubernetesSecretWriter, writes per no-op reconcile
 * (same content applied again; target 0), apply latency, and the writes of a Job-mode reconcile
 * that finds its Job finished. Asserts nothing.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { PullSecretJobLauncher, type JobLaunchRequest } from '../src/kube/job-launcher.js';
import { buildPullSecretManifest } from '../src/kube/pull-secret-manifest.js';
import { createKubernetesSecretWriter, type KubernetesSecretWriter } from '../src/kube/secret-writer.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../test/servers/kubernetes/server.js';
import { fmt, summarize } from './stats.js';

const SECRETS = Number(process.env.BENCH_KUBE_SECRETS ?? 200);
const CONCURRENCY = 16;
const JOB_RECONCILES = 50;
const PULL_SECRET = Buffer.from(
  readFileSync(new URL('../examples/pull-secret.json', import.meta.url), 'utf8').trim(),
);

function manifest(id: string) {
  return buildPullSecretManifest({
    clusterId: id,
    pullSecret: PULL_SECRET,
    secretPath: `local:secrets/hyperfleet-${id}-pull-secret`,
    secretVersion: '1',
  });
}

/** Applies one manifest per id, `concurrency` at a time; per-apply latencies in ms and the elapsed time. */
async function applyAll(
  writer: KubernetesSecretWriter,
  ids: string[],
  concurrency: number,
): Promise<{ times: number[]; elapsedMs: number }> {
  const times: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < ids.length) {
      const id = ids[next++] ?? '';
      const t0 = performance.now();
      await writer.apply(manifest(id));
      times.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { times, elapsedMs: performance.now() - started };
}

/** Writes of a Job-mode reconcile whose Job (same generation) has finished: the launcher reuses it. */
async function jobModeNoOpWrites(server: KubernetesTestServer): Promise<number> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(server.kubeconfigPath);
  const launcher = new PullSecretJobLauncher({ kubeConfig });
  const request: JobLaunchRequest = {
    clusterId: 'cls-bench-job',
    generation: 1,
    pullSecret: PULL_SECRET,
    env: { SECRET_STORE: 'local' },
    image: 'registry.example/pull-secret:1.0',
  };
  const first = launcher.launch(request, { timeoutMs: 10_000 });
  // The test server stores Jobs without running them here: play the Job controller.
  for (
    let i = 0;
    server.getObject('secrets', 'hyperfleet-system', 'cluster-cls-bench-job-pullsecret-data') === undefined;
    i++
  ) {
    if (i > 1000) return first.then(() => Number.NaN);
    await sleep(5);
  }
  server.setJobStatus('hyperfleet-system', 'pullsecret-cls-bench-job-gen1', {
    succeeded: 1,
    conditions: [{ type: 'Complete', status: 'True' }],
  });
  await first;
  server.resetCalls();
  for (let i = 0; i < JOB_RECONCILES; i++) await launcher.launch(request);
  return server.writes() / JOB_RECONCILES;
}

/** Runs the Kubernetes benchmarks; rows are `[name, value, unit, target]`. */
export async function benchKubernetes(): Promise<{ rows: string[][] }> {
  const server = await startKubernetesTestServer({ namespaces: ['hyperfleet-system'] });
  try {
    const writer = createKubernetesSecretWriter({ kubeconfigPath: server.kubeconfigPath });
    const ids = Array.from({ length: SECRETS }, (_, i) => `cls-bench-${i}`);
    const concurrentIds = ids.map((id) => `${id}-c`);
    for (const id of [...ids, ...concurrentIds]) server.createNamespace(`clusters-${id}`);
    // Warm-up: TLS session, client models.
    server.createNamespace('clusters-cls-bench-warm');
    await writer.apply(manifest('cls-bench-warm'));

    server.resetCalls();
    const created = await applyAll(writer, ids, 1);
    const createWrites = server.writes('secrets') / SECRETS;
    const concurrent = await applyAll(writer, concurrentIds, CONCURRENCY);

    server.resetCalls();
    const noop = await applyAll(writer, ids, 1);
    const noopWrites = server.writes() / SECRETS;
    const noopReads = server.calls('GET', 'secrets') / SECRETS;
    const jobNoopWrites = await jobModeNoOpWrites(server);

    const c = summarize(created.times);
    const n = summarize(noop.times);
    return {
      rows: [
        [
          `Kubernetes Secrets provisioned, sequential (N=${SECRETS})`,
          fmt((SECRETS * 1000) / created.elapsedMs),
          'Secrets/s',
          '',
        ],
        [
          `Kubernetes Secrets provisioned, ${CONCURRENCY} concurrent (N=${SECRETS})`,
          fmt((SECRETS * 1000) / concurrent.elapsedMs),
          'Secrets/s',
          '',
        ],
        ['Kubernetes writes per create', fmt(createWrites, 2), 'writes', '1'],
        ['Kubernetes writes per no-op reconcile (same content again)', fmt(noopWrites, 2), 'writes', '0'],
        ['Kubernetes reads per no-op reconcile', fmt(noopReads, 2), 'reads', '1'],
        [
          'Kubernetes writes per no-op Job-mode reconcile (finished Job reused)',
          fmt(jobNoopWrites, 2),
          'writes',
          '0',
        ],
        ['Secret apply latency p50 / p95, create', `${fmt(c.p50, 2)} / ${fmt(c.p95, 2)}`, 'ms', ''],
        ['Secret apply latency p50 / p95, no-op', `${fmt(n.p50, 2)} / ${fmt(n.p95, 2)}`, 'ms', ''],
      ],
    };
  } finally {
    await server.close();
  }
}
