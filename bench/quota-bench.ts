/**
 * The store path under Secret Manager's quotas: N clusters in one GCP project, pushed through
 * StoreProvider (per-project client and quota buckets) and the real SDK client to the test server
 * with its per-project quotas on. First the first reconcile of every cluster, then a burst of N
 * no-op pushes. Prints RESOURCE_EXHAUSTED answers, writes and Secret Manager calls per no-op.
 * Whole-adapter figures are elsewhere (adapter-bench.ts); this one measures the store path alone.
 *
 * The service counts per minute; here the window is BENCH_QUOTA_WINDOW_MS (default 3000) with
 * the same figures (600 reads, 600 writes, 90,000 accesses a window), and the buckets count over
 * the same window: time runs 60,000 / window times faster, the ratios are the service's. At the
 * default the write quota (200/s) is below what the store path manages on 2 cores, so it paces.
 * BENCH_QUOTA_CLUSTERS sets N (default 10,000). Asserts nothing.
 */
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { StoreProvider } from '../src/reconcile/store-provider.js';
import { AdapterMetrics as Metrics } from '../src/adapter/metrics.js';
import {
  QUOTA_OF,
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../test/servers/gcp-secret-manager/index.js';
import { pushBurst, type BurstResult } from '../test/support/push-burst.js';
import { fmt } from './stats.js';

const PROJECT = 'quota-bench-project';
const PAYLOAD = Buffer.from(
  readFileSync(new URL('../examples/pull-secret.json', import.meta.url), 'utf8').trim(),
);
/** Clusters worked on at once: the adapter's default `execution.concurrency`. */
const CONCURRENCY = 16;
/** The pipeline's default retries (execution.retry). */
const RETRY = { maxAttempts: 4, baseDelayMs: 1000, maxDelayMs: 10_000 };

/** Calls the server saw since the last reset, by quota, and its RESOURCE_EXHAUSTED answers. */
function tally(server: SecretManagerTestServer): { writes: number; total: number; exhausted: number } {
  const log = server.callLog;
  return {
    writes: log.filter((c) => QUOTA_OF[c.method] === 'writes').length,
    total: log.length,
    exhausted: log.filter((c) => c.code === 'RESOURCE_EXHAUSTED').length,
  };
}

const failed = (r: BurstResult) => String(r.failures.length);

/** Calls that waited for a token of `quota` so far. */
async function waits(metrics: Metrics, quota: string): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find(
    (m) => m.name === 'pullsecret_store_quota_waits_total',
  );
  return metric?.values.find((v) => v.labels.store === 'gcp' && v.labels.quota === quota)?.value ?? 0;
}

/** Runs the scenario; rows `[benchmark, value, unit, target]` for `printSection`. */
export async function benchQuota(
  clusters = Number(process.env.BENCH_QUOTA_CLUSTERS ?? 10_000),
  windowMs = Number(process.env.BENCH_QUOTA_WINDOW_MS ?? 3000),
): Promise<string[][]> {
  const server = await startSecretManagerTestServer({ project: PROJECT, quotas: { windowMs } });
  const metrics = new Metrics({ defaultMetrics: false });
  const stores = StoreProvider.single(
    { kind: 'gcp', config: { endpoint: server.address, insecure: true, callTimeoutMs: 30_000 } },
    { quotaWindowMs: windowMs, pacing: metrics.storePacing },
  );
  try {
    const scale = `window ${windowMs} ms for the service's minute (x${fmt(60_000 / windowMs, 0)}), ${clusters} clusters, ${CONCURRENCY} at once`;
    let started = performance.now();
    const first = await pushBurst(stores, PROJECT, clusters, PAYLOAD, RETRY, CONCURRENCY);
    const firstSeconds = (performance.now() - started) / 1000;
    const firstCalls = tally(server);
    const firstWaits = await waits(metrics, 'writes');
    server.resetCalls();
    started = performance.now();
    const noOps = await pushBurst(stores, PROJECT, clusters, PAYLOAD, RETRY, CONCURRENCY);
    const noOpSeconds = (performance.now() - started) / 1000;
    const noOpCalls = tally(server);
    return [
      [`quota scaling: ${scale}`, '', '', ''],
      ['first reconcile: created', String(first.outcomes.created), 'clusters', String(clusters)],
      ['first reconcile: failed', failed(first), 'clusters', '0'],
      ['first reconcile: RESOURCE_EXHAUSTED', String(firstCalls.exhausted), 'answers', '0'],
      ['first reconcile: time (scaled window)', fmt(firstSeconds), 's', ''],
      [
        'first reconcile: writes per window (average)',
        fmt((firstCalls.writes / firstSeconds) * (windowMs / 1000), 0),
        'writes',
        '<= 600',
      ],
      ['first reconcile: writes that waited for a token', String(firstWaits), 'calls', ''],
      ['no-op burst: unchanged', String(noOps.outcomes.unchanged), 'clusters', String(clusters)],
      ['no-op burst: failed', failed(noOps), 'clusters', '0'],
      ['no-op burst: RESOURCE_EXHAUSTED', String(noOpCalls.exhausted), 'answers', '0'],
      ['no-op burst: writes per no-op', fmt(noOpCalls.writes / clusters, 2), 'writes', '0'],
      ['no-op burst: Secret Manager calls per no-op', fmt(noOpCalls.total / clusters, 2), 'calls', '1'],
      ['no-op burst: no-op pushes per second (store path)', fmt(clusters / noOpSeconds, 0), '/s', ''],
    ];
  } finally {
    await stores.close();
    await server.stop();
  }
}

// `tsx bench/quota-bench.ts` runs this scenario alone.
if (process.argv[1]?.endsWith('quota-bench.ts') === true) {
  process.env.METADATA_SERVER_DETECTION = 'none';
  for (const row of await benchQuota()) console.log(row.filter((c) => c !== '').join('  '));
}
