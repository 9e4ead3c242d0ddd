/**
 * Transfer-check figures for `npm run bench`: an adapter (local store, embedded broker, manifests)
 * whose fleet schedule checks every cluster of the HyperFleet API stand-in against the
 * account-service stand-in with the transfer window closed, paced at `BENCH_TRANSFER_RATE` requests
 * a second. Measures the request rate the account service saw, the store writes (expected 0) and
 * the adapter's RSS. Asserts nothing. Run alone: `node --import tsx bench/transfer-bench.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { validateAdapterConfig } from '../src/adapter/config.js';
import { startAdapter } from '../src/adapter/service.js';
import { startAccountServiceStandIn } from '../src/dev/account-service/index.js';
import { startHyperFleetApiStandIn } from '../src/dev/hyperfleet-api/index.js';
import type { Cluster } from '../src/hyperfleet/index.js';
import { createLogger } from '../src/observability/logger.js';
import { jsonFixture } from '../test/support/fixtures.js';
import { fmt } from './stats.js';

const CLUSTERS = Number(process.env.BENCH_TRANSFER_CLUSTERS ?? 10_000);
const RATE = Number(process.env.BENCH_TRANSFER_RATE ?? 500);
const WRITES = new Set(['createSecret', 'addVersion', 'deleteSecret']);

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** Store calls counted by the adapter's metrics, split into writes and reads. */
async function storeCalls(
  metrics: Awaited<ReturnType<typeof startAdapter>>['metrics'],
): Promise<{ writes: number; reads: number }> {
  const metric = await metrics.storeApiCalls.get();
  let writes = 0;
  let reads = 0;
  for (const v of metric.values) {
    if (WRITES.has(String(v.labels.method))) writes += v.value;
    else reads += v.value;
  }
  return { writes, reads };
}

/** Rows `[name, value, unit, target]`. */
export async function benchTransfers(clusters = CLUSTERS, rate = RATE): Promise<string[][]> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-bench-transfer-'));
  const account = await startAccountServiceStandIn();
  const api = await startHyperFleetApiStandIn({});
  const fixture = jsonFixture<Cluster & { spec: Record<string, unknown> }>('clusters/gcp-cluster.json');
  const { id: _id, href: _href, ...rest } = fixture;
  // Every cluster with its own cloud.openshift.com token: each check is one authorized request, window closed.
  for (let i = 0; i < clusters; i++) {
    const token = b64(`cluster-${i}:bench-cloud-token`);
    const pullSecret = JSON.stringify({
      auths: { 'cloud.openshift.com': { auth: token }, 'quay.io': { auth: b64('bench:bench') } },
    });
    const cluster = await api.seedCluster({
      ...rest,
      generation: 1,
      spec: { ...fixture.spec, pullSecret: { data: pullSecret } },
      status: { conditions: fixture.status.conditions.map((c) => ({ ...c, observed_generation: 1 })) },
    });
    account.setClusterToken(cluster.id, token);
  }
  const config = validateAdapterConfig({
    hyperfleetApi: { baseUrl: api.url, timeoutMs: 10_000 },
    broker: { type: 'embedded' },
    store: { type: 'local', settings: { dir: join(dir, 'store') } },
    kubernetes: { target: 'manifests', manifestDir: join(dir, 'manifests') },
    execution: { concurrency: 16 },
    server: { healthPort: 0, metricsPort: 0, host: '127.0.0.1', drainSeconds: 5 },
    // An interval of an hour: each cluster once in the run; jitter 0: all due at once, so the pacing alone spreads them.
    accountService: {
      baseUrl: account.url,
      timeoutMs: 10_000,
      transfer: { interval: '1h', jitter: 0, requestsPerSecond: rate },
    },
  });
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const adapter = await startAdapter(config, createLogger({ level: 'warn' }));
  try {
    // The adapter's start lists the clusters (paged) and plans every one; count until all were asked.
    let peakRss = process.memoryUsage().rss;
    let firstAt: number | undefined;
    const deadline = performance.now() + Math.max(60_000, (clusters / rate) * 3000);
    while (account.calls.transfers < clusters && performance.now() < deadline) {
      if (firstAt === undefined && account.calls.transfers > 0) firstAt = performance.now();
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      await sleep(20);
    }
    const lastAt = performance.now();
    // Let the last checks finish before counting store calls.
    await sleep(200);
    const asked = account.calls.transfers;
    const measured = ((asked - 1) * 1000) / Math.max(1, lastAt - (firstAt ?? started));
    const calls = await storeCalls(adapter.metrics);
    const checks = await adapter.metrics.transferChecks.get();
    const byOutcome = checks.values
      .filter((v) => v.value > 0)
      .map((v) => `${String(v.labels.outcome)} ${v.value}`);
    return [
      [
        `transfer checks of ${clusters} clusters, window closed (${byOutcome.join(', ') || 'none'})`,
        String(asked),
        'requests',
        `${clusters}, one per cluster per interval`,
      ],
      [
        `account service request rate, configured ${rate}/s`,
        fmt(measured),
        'requests/s',
        `≤ ${rate} (bursts of a tenth of a second)`,
      ],
      ['store writes during the checks', String(calls.writes), 'writes', '0'],
      [
        'store reads during the checks',
        String(calls.reads),
        'reads',
        `${clusters} (the current pull secret)`,
      ],
      [
        `process RSS, peak (adapter and both stand-ins, ${clusters} clusters)`,
        fmt(peakRss / 1e6, 0),
        'MB',
        'adapter ≤ 200 MB RSS with 10,000',
      ],
      ['process RSS growth over the run', fmt((peakRss - rssBefore) / 1e6, 0), 'MB', ''],
    ];
  } finally {
    await adapter.stop();
    await account.stop();
    await api.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rows = await benchTransfers();
  for (const r of rows) console.log(r.join('  |  '));
}
