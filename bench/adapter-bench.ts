/**
 * Adapter throughput and latency on the embedded broker and the local store (issue "adapter"):
 * N clusters are first created (store + manifest writes), then re-sent as no-op reconciles
 * (a burst for throughput and memory, then a paced run for event-to-status latency).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { validateAdapterConfig } from '../src/adapter/config.js';
import { startAdapter } from '../src/adapter/service.js';
import { startHyperFleetApiStandIn } from '../src/dev/hyperfleet-api/index.js';
import type { AdapterStatus, Cluster } from '../src/hyperfleet/index.js';
import { createLogger } from '../src/observability/logger.js';
import { fmt, summarize } from './stats.js';

const PULL_SECRET = '{"auths":{"registry.redhat.io":{"auth":"dGVzdDp0ZXN0","email":"test@example.com"}}}';
const CONDITIONS = ['ValidationSuccessful', 'DnsSuccessful', 'PlacementSuccessful'].map((type) => ({
  type, status: 'True' as const, observed_generation: 1, created_time: '2026-01-01T00:00:00Z', last_updated_time: '2026-01-01T00:00:00Z', last_transition_time: '2026-01-01T00:00:00Z',
}));

function event(cluster: Cluster, n: number): Buffer {
  return Buffer.from(JSON.stringify({
    specversion: '1.0', id: `bench-${n}`, source: 'bench', type: 'com.redhat.hyperfleet.cluster.reconcile',
    data: { id: cluster.id, kind: 'Cluster', href: `/api/hyperfleet/v1/clusters/${cluster.id}`, generation: cluster.generation },
  }));
}

/** Runs the adapter benchmark for `n` clusters; returns table rows `[name, value, unit, target]`. */
export async function benchAdapter(n: number): Promise<string[][]> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-bench-adapter-'));
  // The stand-in shares this event loop; skip its self-check of every answer against the contract.
  const api = await startHyperFleetApiStandIn({ checkResponses: false });
  const config = validateAdapterConfig({
    hyperfleetApi: { baseUrl: api.url },
    broker: { type: 'embedded', maxInFlight: 1000 },
    store: { type: 'local', settings: { dir: join(dir, 'store') } },
    kubernetes: { target: 'manifests', manifestDir: join(dir, 'manifests') },
    execution: { concurrency: 16 },
    server: { healthPort: 0, metricsPort: 0, host: '127.0.0.1' },
    logLevel: 'warn',
  });
  const adapter = await startAdapter(config, createLogger({ level: 'warn', destination: new Writable({ write: (_c, _e, done) => done() }) }));
  const rows: string[][] = [];
  try {
    const clusters: Cluster[] = [];
    for (let i = 0; i < n; i++) {
      clusters.push(await api.seedCluster({ name: `bench-${i}`, generation: 1, spec: { provider: 'gcp', gcp: { projectId: 'bench-project' }, pullSecret: { data: PULL_SECRET } }, status: { conditions: CONDITIONS } }));
    }
    const statusOf = (id: string): AdapterStatus | undefined => api.listStatuses(id).find((s) => s.adapter === 'pullsecret');
    const waitAll = async (accept: (s: AdapterStatus) => boolean) => {
      for (const c of clusters) while (!((s) => s !== undefined && accept(s))(statusOf(c.id))) await sleep(5);
    };

    // 1. First reconcile of every cluster: secret created, manifest written.
    let started = performance.now();
    for (const [i, c] of clusters.entries()) await adapter.broker.publish(event(c, i));
    await waitAll((s) => s.data?.outcome === 'created');
    rows.push([`N=${n}: first reconcile (create)`, fmt((n * 1000) / (performance.now() - started)), 'clusters/s', '']);

    // 2. Burst of no-op reconciles: all N in flight at once.
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
    const burstStart = new Date();
    started = performance.now();
    for (const [i, c] of clusters.entries()) await adapter.broker.publish(event(c, n + i));
    await waitAll((s) => Date.parse(s.last_report_time) >= burstStart.getTime());
    const burstSeconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const writes = clusters.filter((c) => statusOf(c.id)?.data?.outcome !== 'unchanged').length;
    const k8sWrites = (await adapter.metrics.kubernetesWrites.get()).values.filter((v) => v.labels.outcome !== 'unchanged').reduce((s, v) => s + v.value, 0) - n;
    rows.push([`N=${n}: no-op reconcile throughput (burst)`, fmt(n / burstSeconds), 'reconciles/s', '≥ 500']);
    rows.push([`N=${n}: writes per no-op reconcile`, fmt((writes + k8sWrites) / n, 2), 'writes', '0']);
    rows.push([`N=${n}: peak RSS with N events in flight (one process: adapter + API stand-in + load generator)`, fmt(peakRss / 1024 / 1024), 'MB', '≤ 150 (1,000 in flight)']);

    // 3. Paced no-op reconciles: event-to-status latency below saturation (200 events/s).
    const sample = clusters.slice(0, Math.min(n, 1000));
    const sent = new Map<string, number>();
    for (const [i, c] of sample.entries()) {
      sent.set(c.id, Date.now());
      await adapter.broker.publish(event(c, 2 * n + i));
      await sleep(5);
    }
    const latencies: number[] = [];
    for (const c of sample) {
      const t0 = sent.get(c.id) ?? 0;
      let s = statusOf(c.id);
      while (s === undefined || Date.parse(s.last_report_time) < t0) {
        await sleep(5);
        s = statusOf(c.id);
      }
      latencies.push(Date.parse(s.last_report_time) - t0);
    }
    const l = summarize(latencies);
    rows.push([`N=${n}: no-op event-to-status p50 / p95 / p99 (${sample.length} events at ~200/s)`, `${fmt(l.p50, 0)} / ${fmt(l.p95, 0)} / ${fmt(l.p99, 0)}`, 'ms', 'p99 ≤ 50']);
  } finally {
    await adapter.stop();
    await api.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}
