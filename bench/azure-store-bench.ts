/**
 * The Azure Key Vault store against the Key Vault test server (HTTPS, challenge auth, the real SDK
 * and DefaultAzureCredential through workload identity on loopback): calls and writes of a first
 * run, a no-op and an update, and in-process no-op pushes per second. Asserts nothing.
 * Run alone: `node --import tsx bench/azure-store-bench.ts`.
 */
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { managedLabels } from '../src/pullsecret/identifiers.js';
import { pushSecret } from '../src/stores/push.js';
import { startKeyVaultTestServer } from '../test/servers/azure-key-vault/index.js';
import { keyVaultStore } from '../test/support/store-harness.js';
import { fmt, summarize } from './stats.js';

const PULL_SECRET = readFileSync(new URL('../examples/pull-secret.json', import.meta.url), 'utf8').trim();
const RETRY = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100 };

/** Rows `[name, value, unit, target]` for `printSection`. */
export async function benchAzureStore(pushes: number): Promise<string[][]> {
  const server = await startKeyVaultTestServer();
  const store = await keyVaultStore(server);
  const rows: string[][] = [];
  try {
    const request = (payload: string) => ({
      secretId: 'hyperfleet-cls-bench-akv-pull-secret',
      labels: managedLabels('cls-bench-akv'),
      payload: Buffer.from(payload),
    });
    const measured = async (name: string, payload: string, callTarget: string, writeTarget: string) => {
      const [calls, writes] = [server.totalCalls, server.writes];
      await pushSecret(store, request(payload), { retry: RETRY });
      rows.push(
        [`${name}: Key Vault calls`, String(server.totalCalls - calls), 'calls', callTarget],
        [`${name}: writes`, String(server.writes - writes), 'writes', writeTarget],
      );
    };
    await measured('first run', PULL_SECRET, '', '');
    await measured('no-op', PULL_SECRET, '<= 2', '0');
    await measured(
      'update',
      PULL_SECRET.replace('}}}', '},"quay.io/bench":{"auth":"YmVuY2g6YmVuY2g="}}}'),
      '',
      '1 version',
    );
    const times: number[] = [];
    const started = performance.now();
    for (let i = 0; i < pushes; i++) {
      const t0 = performance.now();
      await pushSecret(
        store,
        request(PULL_SECRET.replace('}}}', '},"quay.io/bench":{"auth":"YmVuY2g6YmVuY2g="}}}')),
        { retry: RETRY },
      );
      times.push(performance.now() - t0);
    }
    const s = summarize(times);
    rows.push(
      [
        'in-process no-op push, Key Vault test server',
        fmt((pushes * 1000) / (performance.now() - started)),
        'pushes/s',
        '',
      ],
      ['  no-op push latency p50 / p95', `${fmt(s.p50, 2)} / ${fmt(s.p95, 2)}`, 'ms', ''],
    );
  } finally {
    await store.close();
    await server.stop();
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const row of await benchAzureStore(Number(process.env.BENCH_PUSHES ?? 500)))
    console.log(row.join('  '));
}
