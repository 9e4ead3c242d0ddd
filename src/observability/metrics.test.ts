import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreProvider } from '../adapter/store-provider.js';
import { Metrics } from './metrics.js';

async function sample(metrics: Metrics, name: string, labels: Record<string, string>): Promise<number | undefined> {
  // A histogram's `_count` series sits among the histogram's values, named by `metricName`.
  const base = name.replace(/_count$/, '');
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name || m.name === base);
  const wanted = Object.entries(labels);
  const values = metric?.values.filter((v) => (v as { metricName?: string }).metricName === undefined || (v as { metricName?: string }).metricName === name);
  return values?.find((v) => wanted.every(([k, val]) => v.labels[k] === val))?.value;
}

test("store API-call series exist at zero for every store's declared methods and codes", async () => {
  const metrics = new Metrics({ defaultMetrics: false });
  assert.equal(await sample(metrics, 'pullsecret_store_api_calls_total', { store: 'gcp', method: 'AddSecretVersion', code: 'RESOURCE_EXHAUSTED' }), 0);
  assert.equal(await sample(metrics, 'pullsecret_store_api_calls_total', { store: 'local', method: 'addVersion', code: 'OK' }), 0);
  assert.equal(await sample(metrics, 'pullsecret_store_api_call_duration_seconds_count', { store: 'gcp', method: 'GetSecret' }), 0);
  assert.equal(await sample(metrics, 'pullsecret_gcp_api_calls_total', { status_code: '429' }), 0);
});

test("one call feeds the per-store counter, the duration histogram and, for GCP, the seed's counter", async () => {
  const metrics = new Metrics({ defaultMetrics: false });
  metrics.onStoreApiCall('GetSecret', 'NOT_FOUND', 12, 'gcp');
  metrics.onStoreApiCall('getSecret', 'OK', 1, 'local');
  assert.equal(await sample(metrics, 'pullsecret_store_api_calls_total', { store: 'gcp', method: 'GetSecret', code: 'NOT_FOUND' }), 1);
  assert.equal(await sample(metrics, 'pullsecret_store_api_call_duration_seconds_count', { store: 'gcp', method: 'GetSecret' }), 1);
  assert.equal(await sample(metrics, 'pullsecret_gcp_api_calls_total', { status_code: '404' }), 1);
  assert.equal(await sample(metrics, 'pullsecret_store_api_calls_total', { store: 'local', method: 'getSecret', code: 'OK' }), 1);
  const gcpTotal = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'pullsecret_gcp_api_calls_total')?.values.reduce((sum, v) => sum + v.value, 0);
  assert.equal(gcpTotal, 1, 'a local call is not a GCP call');
});

test('the store provider wires the hook: local store calls are counted with their outcome', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-metrics-'));
  const metrics = new Metrics({ defaultMetrics: false });
  const stores = new StoreProvider({ kind: 'local', config: { dir }, onApiCall: metrics.onStoreApiCall });
  try {
    const store = await stores.forScope(undefined);
    await store.getSecret('absent');
    await assert.rejects(store.accessVersion('absent', '1'));
    assert.equal(await sample(metrics, 'pullsecret_store_api_calls_total', { store: 'local', method: 'getSecret', code: 'OK' }), 1);
    assert.equal(await sample(metrics, 'pullsecret_store_api_calls_total', { store: 'local', method: 'accessVersion', code: 'SECRET_NOT_FOUND' }), 1);
  } finally {
    await stores.close();
    await rm(dir, { recursive: true, force: true });
  }
});
