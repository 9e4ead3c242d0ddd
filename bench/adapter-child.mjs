// The adapter under benchmark, in a process of its own (plain Node on the build in dist/, no
// TypeScript loader), so its memory is measured alone and the API stand-in does not share its
// event loop. Driven by the parent over IPC: `publish` (event bodies into the embedded broker),
// `stats` (peak RSS, CPU time since `reset-peak`, Kubernetes writes), `reset-peak`, `put-times` (when the adapter last received the
// answer to each cluster's status PUT), `stop`. With BENCH_CHILD_PROF set, the CPU profile of the
// no-op burst (from `reset-peak` to the next `stats`) goes to .pull-secret/profiles.
import { Writable } from 'node:stream';
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { subscribe } from 'node:diagnostics_channel';
import { performance, PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import { validateAdapterConfig } from '../dist/adapter/config.js';
import { startAdapter } from '../dist/adapter/service.js';
import { createLogger } from '../dist/observability/logger.js';

// Event-to-status latency ends when the adapter has the API's answer to its status PUT (the whole
// round trip), seen from the HTTP client (undici: its request is complete with the trailers) without
// touching the adapter's code. Epoch milliseconds, comparable with the parent's clock (same machine).
const STATUS_PUT = /\/clusters\/([^/?]+)\/statuses(?:\?|$)/;
const putAnswered = new Map();
subscribe('undici:request:trailers', ({ request }) => {
  const id = request.method === 'PUT' ? STATUS_PUT.exec(request.path)?.[1] : undefined;
  if (id !== undefined) putAnswered.set(id, performance.timeOrigin + performance.now());
});

const config = validateAdapterConfig(JSON.parse(process.env.BENCH_ADAPTER_CONFIG ?? '{}'));
// Logs at the deployed level (info): every line is formatted and redacted as in production, then dropped.
const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
const adapter = await startAdapter(config, createLogger({ level: 'info', destination: silent }));
let peak = process.memoryUsage.rss();
// CPU time (user + system) of this process since `reset-peak`, in ms: the adapter's own cost of a burst.
let cpuAtReset = process.cpuUsage();
const cpuSinceReset = () => {
  const { user, system } = process.cpuUsage(cpuAtReset);
  return (user + system) / 1000;
};
// Garbage collections since `reset-peak`: young-generation (scavenges) and full ones, count and pause ms.
const gc = { minor: 0, minorMs: 0, major: 0, majorMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const minor = entry.detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR;
    gc[minor ? 'minor' : 'major'] += 1;
    gc[minor ? 'minorMs' : 'majorMs'] += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });
// memoryUsage.rss() skips the heap statistics memoryUsage() gathers: cheap enough to sample often.
setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 25).unref();
// BENCH_CHILD_MEM=ms: the memory breakdown (rss, heap, external, array buffers; MB) on stderr every ms.
const memEvery = Number(process.env.BENCH_CHILD_MEM ?? 0);
if (memEvery > 0) {
  const mb = (n) => (n / 1048576).toFixed(1);
  setInterval(() => {
    const m = process.memoryUsage();
    process.stderr.write(
      `mem rss=${mb(m.rss)} heapTotal=${mb(m.heapTotal)} heapUsed=${mb(m.heapUsed)} external=${mb(m.external)} arrayBuffers=${mb(m.arrayBuffers)}\n`,
    );
  }, memEvery).unref();
}

async function kubernetesWrites() {
  const { values } = await adapter.metrics.kubernetesWrites.get();
  return values.filter((v) => v.labels.outcome !== 'unchanged').reduce((sum, v) => sum + v.value, 0);
}

// BENCH_CHILD_HEAP_PROF=1: also the sampled allocations of the burst (collected ones included), as a .heapprofile.
const heapProfiling = Boolean(process.env.BENCH_CHILD_HEAP_PROF);
const profiler = process.env.BENCH_CHILD_PROF || heapProfiling ? new Session() : undefined;
profiler?.connect();
let profiling = false;

async function startProfile() {
  if (!profiler) return;
  if (heapProfiling) {
    await profiler.post('HeapProfiler.enable');
    await profiler.post('HeapProfiler.startSampling', {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }
  if (process.env.BENCH_CHILD_PROF) {
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  profiling = true;
}

async function stopProfile() {
  if (!profiling) return;
  profiling = false;
  await mkdir('.pull-secret/profiles', { recursive: true });
  if (heapProfiling) {
    const { profile } = await profiler.post('HeapProfiler.stopSampling');
    await writeFile(
      `.pull-secret/profiles/adapter-burst-${process.pid}.heapprofile`,
      JSON.stringify(profile),
    );
  }
  if (process.env.BENCH_CHILD_PROF) {
    const { profile } = await profiler.post('Profiler.stop');
    await writeFile(`.pull-secret/profiles/adapter-burst-${process.pid}.cpuprofile`, JSON.stringify(profile));
  }
}

process.on('message', async (command) => {
  switch (command.type) {
    case 'publish':
      for (const body of command.bodies) await adapter.broker.publish(Buffer.from(body));
      process.send({ type: 'published' });
      break;
    case 'stats':
      {
        const cpuMs = cpuSinceReset();
        await stopProfile();
        process.send({
          type: 'stats',
          peakRss: peak,
          cpuMs,
          gc: { ...gc },
          kubernetesWrites: await kubernetesWrites(),
        });
      }
      break;
    case 'put-times':
      process.send({
        type: 'put-times',
        times: Object.fromEntries(command.ids.map((id) => [id, putAnswered.get(id) ?? null])),
      });
      break;
    case 'reset-peak':
      peak = process.memoryUsage.rss();
      Object.assign(gc, { minor: 0, minorMs: 0, major: 0, majorMs: 0 });
      await startProfile();
      cpuAtReset = process.cpuUsage();
      process.send({ type: 'reset' });
      break;
    case 'stop':
      await adapter.stop();
      process.exit(0);
  }
});
process.send({ type: 'ready' });
