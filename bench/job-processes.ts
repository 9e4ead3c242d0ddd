import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { summarize, type Summary } from './stats.js';

// The executable the image runs (package.json "bin", the Dockerfile's bin/pull-secret): `run-job` goes
// through the job's bundle as in the image. BENCH_CLI: another built entry (e.g. dist/cli/main.js, to compare).
const MAIN = process.env.BENCH_CLI ?? fileURLToPath(new URL('../dist/cli/pull-secret.js', import.meta.url));
const PROBE = fileURLToPath(new URL('./rss-probe.mjs', import.meta.url));

export interface ProcessRuns {
  runs: number;
  runsPerSecond: number;
  wallMs: Summary;
  peakRssMb: number;
  failures: number;
}

function runOnce(
  args: string[],
  env: NodeJS.ProcessEnv,
  node: string,
): Promise<{ ms: number; code: number | null }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(node, ['--import', PROBE, MAIN, ...args], { env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: performance.now() - started, code }));
  });
}

/**
 * Runs the built CLI `runs` times, one process after another (the way Jobs run: one process per
 * reconcile), and reports wall time per process and the highest peak RSS of any of them. `node` is
 * the Node.js binary (default: the one running the bench).
 */
export async function benchProcesses(
  args: string[],
  env: NodeJS.ProcessEnv,
  runs: number,
  rssFile: string,
  node = process.execPath,
): Promise<ProcessRuns> {
  await rm(rssFile, { force: true });
  const times: number[] = [];
  let failures = 0;
  const started = performance.now();
  for (let i = 0; i < runs; i++) {
    const { ms, code } = await runOnce(args, { ...env, BENCH_RSS_FILE: rssFile }, node);
    times.push(ms);
    if (code !== 0) failures++;
  }
  const elapsed = performance.now() - started;
  const rss = (await readFile(rssFile, 'utf8')).trim().split('\n').map(Number);
  return {
    runs,
    runsPerSecond: (runs * 1000) / elapsed,
    wallMs: summarize(times),
    peakRssMb: Math.max(...rss) / 1024,
    failures,
  };
}
