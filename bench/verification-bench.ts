/**
 * Registry verification figures for `npm run bench` (issue 14): the cost of verifying a new pull
 * secret against a real registry on loopback (Debian's docker-registry with TLS; htpasswd Basic auth,
 * and token auth with the test token issuer) with the cache off: HTTP round trips and ms per
 * verification (p50/p95 over BENCH_VERIFY_RUNS, default 50); and the registry calls a no-op
 * reconcile makes (target 0). Skipped (one row saying why) when docker-registry is not installed.
 * Asserts nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { createLogger } from '../src/observability/logger.js';
import { reconcilePullSecret } from '../src/reconcile/reconcile-pull-secret.js';
import { LocalStore } from '../src/stores/local/index.js';
import { RegistryVerifier, VerificationGate, verificationStep } from '../src/verification/index.js';
import { registryUnavailable, startTestRegistry, type TestRegistry } from '../test/support/registry.js';
import { fmt, summarize } from './stats.js';

const RUNS = Number(process.env.BENCH_VERIFY_RUNS ?? 50);

function verifier(registry: TestRegistry, onRequest?: () => void): RegistryVerifier {
  return new RegistryVerifier(
    {
      registries: [registry.host],
      caFile: registry.caFile,
      timeoutMs: 5000,
      perRegistryPerMinute: 1_000_000,
      cacheSeconds: 0,
    },
    { onRequest },
  );
}

/** ms and round trips per verification of a new pull secret (cache off), plus a no-op reconcile's registry calls. */
async function benchOne(registry: TestRegistry, label: string, dir: string): Promise<string[][]> {
  let requests = 0;
  const check = verifier(registry, () => (requests += 1));
  const store = new LocalStore({ dir: join(dir, `store-${registry.auth}`) });
  const log = createLogger({
    level: 'error',
    destination: new Writable({ write: (_c, _e, done) => done() }),
  });
  const gate = new VerificationGate('enforce', check);
  try {
    // Warm-up: TLS session and connection set-up are not what is measured.
    await check.verify(registry.pullSecret());
    const times: number[] = [];
    const before = requests;
    for (let i = 0; i < RUNS; i++) {
      // Each a new pull secret (another email): the reconcile promotes it, so it verifies.
      const doc = JSON.stringify({
        auths: {
          [registry.host]: {
            auth: Buffer.from(`${registry.username}:${registry.password}`).toString('base64'),
            email: `run-${i}@example.com`,
          },
        },
      });
      const t0 = performance.now();
      const report = await check.verify(doc);
      times.push(performance.now() - t0);
      if (report.results[0]?.outcome !== 'accepted')
        throw new Error(`verification failed: ${report.results[0]?.detail ?? 'no result'}`);
    }
    const perCheck = (requests - before) / RUNS;
    const s = summarize(times);

    // Through the reconcile: a new pull secret verifies once; the same one again makes no registry call.
    const secret = registry.pullSecret();
    const input = { clusterId: `cls-verify-${registry.auth}`, pullSecretData: secret };
    const deps = {
      store,
      retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 },
      log,
      steps: [verificationStep(gate)],
    };
    const r0 = registry.requests();
    const k0 = registry.tokenRequests();
    const t0 = performance.now();
    await reconcilePullSecret(input, deps);
    const newMs = performance.now() - t0;
    const newCalls = registry.requests() - r0 + (registry.tokenRequests() - k0);
    const atRegistry = registry.requests();
    const atIssuer = registry.tokenRequests();
    const noopTimes: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t1 = performance.now();
      await reconcilePullSecret(input, deps);
      noopTimes.push(performance.now() - t1);
    }
    const noopCalls = registry.requests() - atRegistry + (registry.tokenRequests() - atIssuer);
    return [
      [
        `${label}: HTTP round trips per verification`,
        fmt(perCheck, 1),
        'requests',
        registry.auth === 'basic' ? '2 (GET /v2/, again with Basic)' : '3 (GET /v2/, token, GET /v2/)',
      ],
      [`${label}: verification of a new pull secret, p50`, fmt(s.p50, 2), 'ms', ''],
      [`${label}: verification of a new pull secret, p95`, fmt(s.p95, 2), 'ms', ''],
      [
        `${label}: reconcile of a new pull secret (local store, enforce)`,
        fmt(newMs, 1),
        `ms, ${newCalls} registry and token calls`,
        '',
      ],
      [`${label}: registry calls of ${RUNS} no-op reconciles`, String(noopCalls), 'requests', '0'],
      [`${label}: no-op reconcile, p50`, fmt(summarize(noopTimes).p50, 2), 'ms', ''],
    ];
  } finally {
    check.close();
    await store.close();
  }
}

/** Rows `[name, value, unit, target]` for the verification section. */
export async function benchVerification(): Promise<string[][]> {
  const missing = registryUnavailable();
  if (missing !== undefined) return [['registry verification', '-', 'skipped', missing]];
  const dir = await mkdtemp(join(tmpdir(), 'ps-verify-bench-'));
  const rows: string[][] = [];
  try {
    for (const auth of ['basic', 'token'] as const) {
      const registry = await startTestRegistry({ auth });
      try {
        rows.push(
          ...(await benchOne(registry, auth === 'basic' ? 'Basic (htpasswd)' : 'Bearer (token realm)', dir)),
        );
      } finally {
        await registry.stop();
      }
    }
    return rows;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('verification-bench.ts')) {
  for (const row of await benchVerification()) console.log(row.filter(Boolean).join('  '));
}
