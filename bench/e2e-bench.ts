/**
 * End-to-end figures for `npm run bench`: N clusters created through the HyperFleet API stand-in
 * (`POST /clusters`) until the adapter reports `Available=True` for every one, with the whole dev
 * stack in this process (Sentinel polling over HTTP, embedded broker, adapter, local encrypted store,
 * manifest directory). Reports clusters/s and time to settle, measured from the first POST. Asserts
 * nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { createClusters, validClusterRequests } from '../src/dev/demo-clusters.js';
import { availableOnCurrentGeneration, waitUntilSettled } from '../src/dev/settle.js';
import { startDevStack } from '../src/dev/stack.js';
import { createLogger } from '../src/observability/logger.js';
import { createProgress } from '../src/observability/progress.js';
import { fmt } from './stats.js';

/** HyperFleet's target: average provisioning time under 30 s; a fleet of 1 000 should settle within it. */
const SETTLE_TARGET_S = 30;

/**
 * Runs the end-to-end benchmark for `n` clusters on a fresh stack (free ports, temporary data
 * directory, removed afterwards). Rows are `[name, value, unit, target]`.
 * @throws Error when the clusters do not all settle within ten minutes
 */
export async function benchEndToEnd(n: number): Promise<string[][]> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-bench-e2e-'));
  const warnings: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      warnings.push(chunk.toString());
      done();
    },
  });
  const stack = await startDevStack({
    dataDir: join(dir, 'dev'),
    ports: { api: 0, health: 0, metrics: 0 },
    // Upstream's 5 s poll would dominate the figure; a short poll measures the pipeline instead.
    sentinel: { pollIntervalMs: 100 },
    // BENCH_E2E_PERSIST=0: the API stand-in keeps its state in memory only (no state file to rewrite).
    persistApi: process.env.BENCH_E2E_PERSIST !== '0',
    logger: createLogger({ level: 'warn', destination: sink }),
  });
  try {
    const started = performance.now();
    const creating = createProgress({ label: `e2e ${n}: clusters created`, total: n });
    const clusters = await createClusters(stack.urls.apiBase, validClusterRequests(n), {
      concurrency: 16,
      onCreated: (done) => creating.update(done),
    });
    creating.finish();
    const createdS = (performance.now() - started) / 1000;
    const settling = createProgress({ label: `e2e ${n}: Available=True`, total: n });
    const outcome = await waitUntilSettled(
      stack.api,
      clusters.map((c) => c.id),
      availableOnCurrentGeneration,
      { timeoutMs: 600_000, intervalMs: 20, onProgress: (done) => settling.update(done) },
    );
    settling.finish(outcome.settled ? undefined : 'timed out');
    if (!outcome.settled)
      throw new Error(
        `end-to-end benchmark: ${outcome.pending.length} of ${n} clusters not Available after 10 min (${warnings.length} warnings logged)`,
      );
    const settleS = (performance.now() - started) / 1000;
    return [
      [`end-to-end, ${n} clusters: POST → Available=True`, fmt(n / settleS), 'clusters/s', ''],
      [`end-to-end, ${n} clusters: time to settle`, fmt(settleS, 2), 's', `< ${SETTLE_TARGET_S} s`],
      [`end-to-end, ${n} clusters: creating them through the API`, fmt(createdS, 2), 's', ''],
    ];
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
