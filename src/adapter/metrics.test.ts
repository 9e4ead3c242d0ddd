import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreProvider } from '../reconcile/store-provider.js';
import { AdapterMetrics as Metrics } from './metrics.js';
import { quotaBucket } from '../stores/rate-limited-store.js';

async function sample(
  metrics: Metrics,
  name: string,
  labels: Record<string, string>,
): Promise<number | undefined> {
  // A histogram's `_count` series sits among the histogram's values, named by `metricName`.
  const base = name.replace(/_count$/, '');
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name || m.name === base);
  const wanted = Object.entries(labels);
  const values = metric?.values.filter(
    (v) =>
      (v as { metricName?: string }).metricName === undefined ||
      (v as { metricName?: string }).metricName === name,
  );
  return values?.find((v) => wanted.every(([k, val]) => v.labels[k] === val))?.value;
}

test("store API-call series exist at zero for every store's declared methods and codes", async () => {
  const metrics = new Metrics({ defaultMetrics: false });
  assert.equal(
    await sample(metrics, 'pullsecret_store_api_calls_total', {
      store: 'gcp',
      method: 'AddSecretVersion',
      code: 'RESOURCE_EXHAUSTED',
    }),
    0,
  );
  assert.equal(
    await sample(metrics, 'pullsecret_store_api_calls_total', {
      store: 'local',
      method: 'addVersion',
      code: 'OK',
    }),
    0,
  );
  assert.equal(
    await sample(metrics, 'pullsecret_store_api_call_duration_seconds_count', {
      store: 'gcp',
      method: 'GetSecret',
    }),
    0,
  );
  assert.equal(await sample(metrics, 'pullsecret_gcp_api_calls_total', { status_code: '429' }), 0);
});

test("one call feeds the per-store counter, the duration histogram and, for GCP, the seed's counter", async () => {
  const metrics = new Metrics({ defaultMetrics: false });
  metrics.onStoreApiCall('GetSecret', 'NOT_FOUND', 12, 'gcp');
  metrics.onStoreApiCall('getSecret', 'OK', 1, 'local');
  assert.equal(
    await sample(metrics, 'pullsecret_store_api_calls_total', {
      store: 'gcp',
      method: 'GetSecret',
      code: 'NOT_FOUND',
    }),
    1,
  );
  assert.equal(
    await sample(metrics, 'pullsecret_store_api_call_duration_seconds_count', {
      store: 'gcp',
      method: 'GetSecret',
    }),
    1,
  );
  assert.equal(await sample(metrics, 'pullsecret_gcp_api_calls_total', { status_code: '404' }), 1);
  assert.equal(
    await sample(metrics, 'pullsecret_store_api_calls_total', {
      store: 'local',
      method: 'getSecret',
      code: 'OK',
    }),
    1,
  );
  const gcpTotal = (await metrics.registry.getMetricsAsJSON())
    .find((m) => m.name === 'pullsecret_gcp_api_calls_total')
    ?.values.reduce((sum, v) => sum + v.value, 0);
  assert.equal(gcpTotal, 1, 'a local call is not a GCP call');
});

test('the store provider wires the hook: local store calls are counted with their outcome', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-metrics-'));
  const metrics = new Metrics({ defaultMetrics: false });
  const stores = StoreProvider.single(
    { kind: 'local', config: { dir } },
    { onApiCall: metrics.onStoreApiCall },
  );
  try {
    const store = await stores.forTarget({ provider: '*', settings: {} });
    await store.getSecret('absent');
    await assert.rejects(store.accessVersion('absent', '1'));
    assert.equal(
      await sample(metrics, 'pullsecret_store_api_calls_total', {
        store: 'local',
        method: 'getSecret',
        code: 'OK',
      }),
      1,
    );
    assert.equal(
      await sample(metrics, 'pullsecret_store_api_calls_total', {
        store: 'local',
        method: 'accessVersion',
        code: 'SECRET_NOT_FOUND',
      }),
      1,
    );
  } finally {
    await stores.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('quota buckets: the lowest fill level among live scopes, full when none is live, and waits', async () => {
  const metrics = new Metrics({ defaultMetrics: false });
  const tokens = (quota: string) => sample(metrics, 'pullsecret_store_quota_tokens', { store: 'gcp', quota });
  // Pre-created from the GCP descriptor: a full bucket holds a sixtieth of the quota.
  assert.equal(await tokens('writes'), 10);
  assert.equal(await tokens('reads'), 10);
  assert.equal(await tokens('accesses'), 1500);
  assert.equal(
    await sample(metrics, 'pullsecret_store_quota_waits_total', { store: 'gcp', quota: 'writes' }),
    0,
  );
  const busy = quotaBucket(600);
  const idle = quotaBucket(600);
  metrics.storePacing.track('gcp', 'writes', busy);
  metrics.storePacing.track('gcp', 'writes', idle);
  for (let i = 0; i < 7; i++) await busy.acquire();
  const level = (await tokens('writes')) ?? NaN;
  assert.ok(level >= 3 && level < 4, `the busiest project's bucket: ${level}`);
  busy.drain();
  assert.ok(((await tokens('writes')) ?? NaN) < 0.5, 'a drained bucket shows empty');
  metrics.storePacing.waited('gcp', 'writes');
  assert.equal(
    await sample(metrics, 'pullsecret_store_quota_waits_total', { store: 'gcp', quota: 'writes' }),
    1,
  );
  metrics.storePacing.untrack('gcp', 'writes', busy);
  metrics.storePacing.untrack('gcp', 'writes', idle);
  assert.equal(await tokens('writes'), 10, 'no live scope: full');
});

test('pullsecret_broker_connected follows the broker at each scrape (0 while it reconnects)', async () => {
  const metrics = new Metrics();
  let connected = false;
  metrics.watchBroker({ kind: 'rabbitmq', isReady: () => connected });
  assert.match(await metrics.registry.metrics(), /^pullsecret_broker_connected\{broker="rabbitmq"\} 0$/m);
  connected = true;
  assert.match(await metrics.registry.metrics(), /^pullsecret_broker_connected\{broker="rabbitmq"\} 1$/m);
  connected = false;
  assert.match(await metrics.registry.metrics(), /^pullsecret_broker_connected\{broker="rabbitmq"\} 0$/m);
});
