/**
 * PullSecretShare figures for `npm run bench` (issue 16): the share controller in this process
 * against the HTTPS Kubernetes API test server, one share to BENCH_SHARE_NAMESPACES namespaces
 * (default 1,000), each granted `use` by a RoleBinding of its own:
 * - time from the share's creation until every namespace has its copy;
 * - time from a source update until each copy has the new data (p50/p99 over the copies, seen by a
 *   watch of the copies);
 * - Kubernetes API calls per unchanged consumer on a resync (target 0: the watches answer), and per
 *   consumer on an access recheck (one SubjectAccessReview each).
 * Asserts nothing. Run alone: `npx tsx bench/shares-bench.ts`.
 */
import { realpathSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { createLogger } from '../src/observability/logger.js';
import { ShareController } from '../src/shares/controller.js';
import { ShareMetrics } from '../src/shares/metrics.js';
import { SHARE_API_VERSION, SHARE_LABEL } from '../src/kube/share-types.js';
import { startKubernetesTestServer } from '../test/servers/kubernetes/server.js';
import { fmt, summarize } from './stats.js';

const DOCKER = (n: number) =>
  Buffer.from(
    JSON.stringify({ auths: { 'quay.io': { auth: Buffer.from(`bench:v${n}`).toString('base64') } } }),
  ).toString('base64');

async function until(check: () => boolean, timeoutMs = 600_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error('shares bench: timed out');
    await sleep(20);
  }
}

/** Rows `[name, value, unit, target]`. */
export async function benchShares(
  namespaces = Number(process.env.BENCH_SHARE_NAMESPACES ?? '1000'),
): Promise<string[][]> {
  const server = await startKubernetesTestServer({ namespaces: ['clusters-c1'] });
  const kc = new KubeConfig();
  kc.loadFromFile(server.kubeconfigPath);
  const controller = new ShareController({
    kubeConfig: kc,
    metrics: new ShareMetrics(new Registry()),
    logger: createLogger({ level: 'silent' }),
    recheckSeconds: 86_400,
  });
  const controllerWatch = new AbortController();
  try {
    server.seed({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'c1-pull-secret',
        namespace: 'clusters-c1',
        labels: { 'managed-by': 'hyperfleet', 'cluster-id': 'c1' },
      },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': DOCKER(1) },
    });
    server.seed({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'use-bench' },
      rules: [{ apiGroups: ['pullsecret.hyperfleet.io'], resources: ['pullsecretshares'], verbs: ['use'] }],
    });
    const names = Array.from({ length: namespaces }, (_, i) => `bench-${String(i).padStart(5, '0')}`);
    for (const ns of names) {
      server.createNamespace(ns, { bench: 'yes' });
      server.seed({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'use-bench', namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'use-bench' },
        subjects: [{ kind: 'ServiceAccount', name: 'default' }],
      });
    }
    controller.start();
    await controller.idle();

    const copies = () =>
      server.listObjects('secrets').filter((s) => s.metadata.labels?.[SHARE_LABEL] === 'bench').length;
    let started = performance.now();
    server.seed({
      apiVersion: SHARE_API_VERSION,
      kind: 'PullSecretShare',
      metadata: { name: 'bench' },
      spec: {
        source: { clusterId: 'c1' },
        consumers: { namespaceSelector: { matchLabels: { bench: 'yes' } } },
      },
    });
    await until(() => copies() === namespaces);
    const projectAll = performance.now() - started;
    await controller.idle();

    // Every copy's update, as a watch of the copies sees it.
    const arrived = new Map<string, number>();
    const want = DOCKER(2);
    await new Watch(kc)
      .watch(
        `/api/v1/secrets`,
        { labelSelector: `${SHARE_LABEL}=bench` },
        (type, obj: { metadata?: { namespace?: string }; data?: Record<string, string> }) => {
          if (
            type === 'MODIFIED' &&
            obj.data?.['.dockerconfigjson'] === want &&
            !arrived.has(obj.metadata?.namespace ?? '')
          )
            arrived.set(obj.metadata?.namespace ?? '', performance.now());
        },
        () => undefined,
      )
      .then((c) => controllerWatch.signal.addEventListener('abort', () => c.abort()));
    await sleep(200);
    const core = kc.makeApiClient(CoreV1Api);
    const source = await core.readNamespacedSecret({ namespace: 'clusters-c1', name: 'c1-pull-secret' });
    started = performance.now();
    await core.replaceNamespacedSecret({
      namespace: 'clusters-c1',
      name: 'c1-pull-secret',
      body: { ...source, data: { '.dockerconfigjson': want } },
    });
    await until(() => arrived.size === namespaces);
    const latency = summarize([...arrived.values()].map((t) => t - started));
    await controller.idle();

    server.resetCalls();
    controller.resync();
    await controller.idle();
    const resyncCalls = server.requests().filter((r) => r.method !== 'WATCH').length;
    server.resetCalls();
    controller.recheck();
    await controller.idle();
    const recheckCalls = server.requests().filter((r) => r.method !== 'WATCH').length;
    return [
      [`project a share to ${namespaces} namespaces`, fmt(projectAll / 1000, 2), 's', ''],
      [`source update reaching every copy: p50`, fmt(latency.p50, 0), 'ms', ''],
      [`source update reaching every copy: p99`, fmt(latency.p99, 0), 'ms', 'seconds'],
      ['Kubernetes calls per unchanged consumer on a resync', fmt(resyncCalls / namespaces, 3), 'calls', '0'],
      [
        'Kubernetes calls per consumer on an access recheck',
        fmt(recheckCalls / namespaces, 3),
        'calls',
        '1 (its review)',
      ],
    ];
  } finally {
    controllerWatch.abort();
    await controller.stop();
    await server.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  for (const row of await benchShares()) console.log(row.join('  '));
}
