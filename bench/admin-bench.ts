/**
 * Admin API figures for `npm run bench`: `GET clusters/{id}` answers per second on loopback (an
 * adapter with the local store, the HyperFleet API stand-in, kept-alive connections) and the cost of
 * one bearer token check (SHA-256 of the presented token, two constant-time comparisons). Asserts
 * nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent } from 'undici';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { adminRequest } from '../src/admin/admin-client.js';
import { fileTokenStorage } from '../src/admin/token-file.js';
import { TokenManager } from '../src/admin/token-manager.js';
import { parseTokenState } from '../src/admin/token-state.js';
import { startAdapterStack } from '../test/support/adapter-stack.js';
import { fmt, summarize } from './stats.js';
import { readFile } from 'node:fs/promises';

const READS = Number(process.env.BENCH_ADMIN_READS ?? 2000);
const CHECKS = Number(process.env.BENCH_ADMIN_CHECKS ?? 200_000);
const CONCURRENCY = 8;

/** µs per `TokenManager.check` for a valid and for a wrong token. */
async function tokenCheckCost(dir: string): Promise<string[][]> {
  const file = join(dir, 'check-tokens.json');
  const tokens = new TokenManager({ storage: fileTokenStorage(file), pollMs: 0 });
  await tokens.start();
  await tokens.rotateNow();
  const current = parseTokenState(await readFile(file, 'utf8'), 'bench').current.token;
  const rows: string[][] = [];
  for (const [label, presented] of [
    ['valid (current)', current],
    ['wrong', 'd3JvbmctdG9rZW4td3JvbmctdG9rZW4td3JvbmctdG9rZW4='],
  ] as const) {
    const started = performance.now();
    for (let i = 0; i < CHECKS; i++) tokens.check(presented);
    rows.push([
      `token check, ${label}`,
      fmt(((performance.now() - started) * 1000) / CHECKS, 2),
      'µs per request',
      '',
    ]);
  }
  tokens.stop();
  return rows;
}

/** `GET clusters/{id}` per second, CONCURRENCY at a time, and its latency. */
async function adminReads(dir: string): Promise<string[][]> {
  const tokenFile = join(dir, 'admin-tokens.json');
  const stack = await startAdapterStack({ admin: { enabled: true, port: 0, tokens: { file: tokenFile } } });
  const agent = new Agent({ connections: CONCURRENCY });
  try {
    const cluster = await stack.seedCluster();
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) =>
      s.conditions.some((c) => c.type === 'Available' && c.status === 'True'),
    );
    const token = parseTokenState(await readFile(tokenFile, 'utf8'), 'bench').current.token;
    const server = `http://127.0.0.1:${stack.adapter.admin.server?.port ?? 0}`;
    const read = () => adminRequest({ server, method: 'GET', path: `/clusters/${cluster.id}`, token, agent });
    await read();
    const times: number[] = [];
    let next = 0;
    let failures = 0;
    const started = performance.now();
    const worker = async (): Promise<void> => {
      while (next++ < READS) {
        const t0 = performance.now();
        if ((await read()).status !== 200) failures++;
        times.push(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const perSecond = (READS * 1000) / (performance.now() - started);
    const s = summarize(times);
    return [
      [`admin GET clusters/{id}, ${CONCURRENCY} at once (${failures} failed)`, fmt(perSecond), 'reads/s', ''],
      ['admin GET clusters/{id} latency p50 / p95', `${fmt(s.p50, 2)} / ${fmt(s.p95, 2)}`, 'ms', ''],
    ];
  } finally {
    await agent.destroy();
    await stack.stop();
  }
}

/** Rows `[name, value, unit, target]` for the admin section. */
export async function benchAdmin(): Promise<string[][]> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-admin-bench-'));
  try {
    return [...(await adminReads(dir)), ...(await tokenCheckCost(dir))];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('admin-bench.ts')) {
  for (const row of await benchAdmin()) console.log(row.filter(Boolean).join('  '));
}
