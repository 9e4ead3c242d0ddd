/**
 * AWS Secrets Manager figures for `npm run bench`, against the SigV4-verifying test server through
 * the real SDK, in process: the calls (and writes) of a first run, a no-op and an update, and no-op
 * pushes per second. Asserts nothing.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { awsStoreFactory } from '../src/stores/aws-secrets-manager/index.js';
import { pushSecret } from '../src/stores/push.js';
import { managedLabels } from '../src/pullsecret/identifiers.js';
import {
  startAwsSecretsManagerTestServer,
  TEST_CREDENTIALS,
} from '../test/servers/aws-secrets-manager/index.js';
import { awsTestEnv } from '../test/support/store-harness.js';
import { fmt, summarize } from './stats.js';

const PUSHES = Number(process.env.BENCH_AWS_PUSHES ?? 1000);
const PULL_SECRET = Buffer.from(
  readFileSync(new URL('../examples/pull-secret.json', import.meta.url), 'utf8').trim(),
);

/** Rows `[name, value, unit, target]`. */
export async function benchAwsStore(): Promise<string[][]> {
  Object.assign(process.env, awsTestEnv());
  const server = await startAwsSecretsManagerTestServer();
  const store = await awsStoreFactory.create({
    accountId: TEST_CREDENTIALS.accountId,
    region: server.region,
    endpoint: server.endpoint,
    callTimeoutMs: 5000,
  });
  const rows: string[][] = [];
  try {
    const request = {
      secretId: 'hyperfleet-cls-bench-aws-pull-secret',
      labels: managedLabels('cls-bench-aws'),
      payload: PULL_SECRET,
    };
    const retry = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100 };
    const counted = async (name: string, payload: Buffer, target: string) => {
      server.resetCalls();
      await pushSecret(store, { ...request, payload }, { retry });
      rows.push([`calls of ${name}`, `${server.totalCalls} (${server.writeCalls} writes)`, 'calls', target]);
    };
    await counted('a first run', PULL_SECRET, '');
    await counted('a no-op', PULL_SECRET, '<= 2 calls, 0 writes');
    const changed = Buffer.from(
      JSON.stringify({ ...(JSON.parse(PULL_SECRET.toString()) as object), bench: 'changed' }),
    );
    await counted('an update', changed, '');
    const times: number[] = [];
    const started = performance.now();
    for (let i = 0; i < PUSHES; i++) {
      const t0 = performance.now();
      await pushSecret(store, { ...request, payload: changed }, { retry });
      times.push(performance.now() - t0);
    }
    const s = summarize(times);
    rows.push([
      'in-process no-op pushes',
      fmt((PUSHES * 1000) / (performance.now() - started)),
      'per second',
      '',
    ]);
    rows.push(['no-op push latency p50 / p95', `${fmt(s.p50, 2)} / ${fmt(s.p95, 2)}`, 'ms', '']);
  } finally {
    await store.close();
    await server.stop();
  }
  return rows;
}
