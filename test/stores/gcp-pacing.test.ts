// Pacing against the Secret Manager test server with its quotas on: bursts of pushes through the
// real GCP client and StoreProvider (one client and one set of quota buckets per project), as the
// adapter makes them (16 clusters at once, the default execution.concurrency). The quota window is
// 2 s instead of a minute, with the service's ratios (120 reads, 120 writes, 18,000 accesses a
// window), so a burst of a few hundred clusters presses on it.
process.env.METADATA_SERVER_DETECTION = 'none';

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import {
  StoreProvider,
  type StoreProviderOptions,
  type StoreRouteOptions,
} from '../../src/reconcile/store-provider.js';
import { AdapterMetrics as Metrics } from '../../src/adapter/metrics.js';
import { managedLabels } from '../../src/pullsecret/identifiers.js';
import { pushSecret } from '../../src/stores/push.js';
import {
  installLoopbackGuard,
  startSecretManagerTestServer,
  type LoopbackGuard,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';
import { pushBurst, seedBurst, type BurstMix } from '../support/push-burst.js';

const WINDOW_MS = 2000;
const LIMITS = { reads: 120, writes: 120, accesses: 18_000 };
const CONCURRENCY = 16;
const PAYLOAD = Buffer.from(VALID_PULL_SECRET);
const MIX: BurstMix = { noOp: 80, changed: 60, firstRun: 60 };
const TOTAL = MIX.noOp + MIX.changed + MIX.firstRun;
const RETRY = { maxAttempts: 4, baseDelayMs: 50, maxDelayMs: 500 };

let server: SecretManagerTestServer;
let guard: LoopbackGuard;
const providers: StoreProvider[] = [];

function provider({
  writesPerMinute,
  readsPerMinute,
  accessesPerMinute,
  ...options
}: Partial<StoreRouteOptions> & Omit<StoreProviderOptions, 'routes'>): StoreProvider {
  const route = {
    kind: 'gcp',
    config: { endpoint: server.address, insecure: true, callTimeoutMs: 10_000 },
    writesPerMinute,
    readsPerMinute,
    accessesPerMinute,
  };
  const stores = StoreProvider.single(route, options);
  providers.push(stores);
  return stores;
}

/** RESOURCE_EXHAUSTED answers the server gave for `project`. */
const exhausted = (project: string) =>
  server.callLog.filter(
    (c) =>
      c.code === 'RESOURCE_EXHAUSTED' &&
      (c.resource === `projects/${project}` || c.resource.startsWith(`projects/${project}/`)),
  ).length;

async function sample(
  metrics: Metrics,
  name: string,
  labels: Record<string, string>,
): Promise<number | undefined> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return metric?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))?.value;
}

before(async () => {
  guard = installLoopbackGuard();
  server = await startSecretManagerTestServer({ quotas: { windowMs: WINDOW_MS, limits: LIMITS } });
});

after(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await server.stop();
  guard.uninstall();
});

describe('a burst of pushes into one project with the quotas enforced', () => {
  test('paced to the declared quotas: every push succeeds and the service never answers RESOURCE_EXHAUSTED', async () => {
    seedBurst(server, 'paced-project', MIX, PAYLOAD);
    const metrics = new Metrics({ defaultMetrics: false });
    // The service's ratios, per window: the buckets count over the same window as the server.
    const stores = provider({
      writesPerMinute: LIMITS.writes,
      readsPerMinute: LIMITS.reads,
      accessesPerMinute: LIMITS.accesses,
      quotaWindowMs: WINDOW_MS,
      pacing: metrics.storePacing,
    });
    const result = await pushBurst(stores, 'paced-project', TOTAL, PAYLOAD, RETRY, CONCURRENCY);
    assert.deepEqual(result.failures, []);
    assert.deepEqual(result.outcomes, { unchanged: MIX.noOp, updated: MIX.changed, created: MIX.firstRun });
    assert.equal(exhausted('paced-project'), 0);
    // The burst did press on the quotas: without pacing it would have exceeded them (next test).
    assert.ok(
      ((await sample(metrics, 'pullsecret_store_quota_waits_total', { store: 'gcp', quota: 'writes' })) ??
        0) > 100,
    );
    assert.ok(
      ((await sample(metrics, 'pullsecret_store_quota_waits_total', { store: 'gcp', quota: 'reads' })) ?? 0) >
        0,
    );
    assert.equal(
      await stores.forTarget({ provider: '*', settings: { projectId: 'paced-project' } }),
      await stores.forTarget({ provider: '*', settings: { projectId: 'paced-project' } }),
      'one client and one set of buckets per project, shared by all its work',
    );
  });

  test('not paced (declared far above the quota): the same burst runs into RESOURCE_EXHAUSTED, classified as STORE_QUOTA_EXCEEDED', async () => {
    seedBurst(server, 'unpaced-project', MIX, PAYLOAD);
    const stores = provider({
      writesPerMinute: 1_000_000,
      readsPerMinute: 1_000_000,
      accessesPerMinute: 10_000_000,
      quotaWindowMs: WINDOW_MS,
    });
    // No retries: every refused call fails its push, so the two counts must match.
    const result = await pushBurst(
      stores,
      'unpaced-project',
      TOTAL,
      PAYLOAD,
      { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      CONCURRENCY,
    );
    assert.ok(exhausted('unpaced-project') > 0, 'the server refused calls beyond its quota');
    assert.equal(result.failures.length, exhausted('unpaced-project'));
    assert.deepEqual(new Set(result.failures), new Set(['STORE_QUOTA_EXCEEDED']));
  });
});

test('a call answered RESOURCE_EXHAUSTED is retried only once its drained bucket has a fresh token, not right after its backoff', async () => {
  const project = 'drained-project';
  const metrics = new Metrics({ defaultMetrics: false });
  const finished: { method: string; code: string; at: number }[] = [];
  // A real minute and 600 writes: a bucket of 10 writes, one more every ~107 ms.
  const stores = provider({
    pacing: metrics.storePacing,
    onApiCall: (method, code) => finished.push({ method, code, at: performance.now() }),
  });
  const store = await stores.forTarget({ provider: '*', settings: { projectId: project } });
  server.injectFault({
    method: 'AddSecretVersion',
    code: status.RESOURCE_EXHAUSTED,
    message:
      "Quota exceeded for quota metric 'Write requests' and limit 'Write requests per minute per project'.",
  });
  const pushed = await pushSecret(
    store,
    {
      secretId: 'hyperfleet-cls-drained-pull-secret',
      labels: managedLabels('cls-drained'),
      payload: PAYLOAD,
    },
    { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 } },
  );
  assert.equal(pushed.outcome, 'created');
  const adds = finished.filter((c) => c.method === 'AddSecretVersion');
  assert.deepEqual(
    adds.map((c) => c.code),
    ['RESOURCE_EXHAUSTED', 'OK'],
  );
  const [refused, retried] = adds as [(typeof adds)[0], (typeof adds)[0]];
  // 8 of the bucket's 10 tokens were left when the call was refused: without the drain the retry
  // would have gone out after its 1 ms backoff. With it, it waited for the next token (~107 ms).
  assert.ok(
    retried.at - refused.at >= 90,
    `retried ${Math.round(retried.at - refused.at)} ms after the refusal`,
  );
  // Three waits after the drain: the retried create's two tokens (GCP's create holding a payload is two writes; its
  // CreateSecret then answers ALREADY_EXISTS), then the add's.
  assert.equal(
    await sample(metrics, 'pullsecret_store_quota_waits_total', { store: 'gcp', quota: 'writes' }),
    3,
  );
});
