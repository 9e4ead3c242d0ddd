import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PullSecretError } from '../errors/index.js';
import { instrumented } from './instrumented-store.js';
import { LocalStore } from './local/index.js';
import { quotaLimits, withRateLimits, type PacingObserver, type QuotaKind } from './rate-limited-store.js';
import type { SecretStore } from './store.js';
import { TokenBucket } from '../util/token-bucket.js';

/** A bucket that only counts the tokens taken. */
function countingBucket(): TokenBucket & { taken: number } {
  const bucket = new TokenBucket(1_000_000, 1_000_000);
  const counted = Object.assign(bucket, { taken: 0 });
  const acquire = bucket.acquire.bind(bucket);
  counted.acquire = (signal) => {
    counted.taken += 1;
    return acquire(signal);
  };
  return counted;
}

/** Records what the wrapper tells its observer. */
function recordingObserver(): Pick<PacingObserver, 'waited'> & { waits: QuotaKind[] } {
  const waits: QuotaKind[] = [];
  return { waits, waited: (_store, quota) => void waits.push(quota) };
}

async function withLocalStore(fn: (store: LocalStore) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-rate-'));
  const store = new LocalStore({ dir });
  try {
    await fn(store);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

test('every call takes a token from the bucket of the quota it counts against', async () => {
  await withLocalStore(async (local) => {
    const buckets = { reads: countingBucket(), writes: countingBucket(), accesses: countingBucket() };
    const store = withRateLimits(local, buckets);
    await store.createSecret('s1', { 'managed-by': 'hyperfleet' });
    await store.addVersion('s1', Buffer.from('{"auths":{}}'));
    await store.getSecret('s1');
    await store.describe('s1');
    await store.accessLatestEnabled('s1');
    await store.accessVersion('s1', '1');
    await store.deleteSecret('s1');
    assert.deepEqual(
      { reads: buckets.reads.taken, writes: buckets.writes.taken, accesses: buckets.accesses.taken },
      { reads: 2, writes: 3, accesses: 2 },
    );
  });
});

test("a create holding a payload takes the store's writesPerCreate write tokens (GCP: create and add); without one, one", async () => {
  await withLocalStore(async (local) => {
    const buckets = { reads: countingBucket(), writes: countingBucket(), accesses: countingBucket() };
    const twoWrites: SecretStore = { ...instrumented(local, () => undefined), writesPerCreate: 2 };
    const store = withRateLimits(twoWrites, buckets);
    assert.equal(store.writesPerCreate, 2);
    await store.createSecret('s3', { 'managed-by': 'hyperfleet' }, { payload: Buffer.from('{"auths":{}}') });
    assert.equal(buckets.writes.taken, 2);
    await store.createSecret('s4', { 'managed-by': 'hyperfleet' });
    assert.equal(buckets.writes.taken, 3);
    assert.equal((await local.accessLatestEnabled('s3'))?.data.toString(), '{"auths":{}}');
  });
});

test('the version-lifecycle methods are writes, and a store without them stays without them', async () => {
  await withLocalStore(async (local) => {
    const buckets = { reads: countingBucket(), writes: countingBucket(), accesses: countingBucket() };
    const store = withRateLimits(local, buckets);
    await store.createSecret('s2', { 'managed-by': 'hyperfleet' });
    await store.addVersion('s2', Buffer.from('{"auths":{}}'));
    await store.addVersion('s2', Buffer.from('{"auths":{"a":{}}}'));
    await store.disableVersion?.('s2', '1');
    await store.enableVersion?.('s2', '1');
    await store.destroyVersion?.('s2', '1');
    assert.equal(buckets.writes.taken, 6);
    assert.deepEqual(
      (await local.describe('s2'))?.versions.map((v) => v.state),
      ['ENABLED', 'DESTROYED'],
    );
    const plain: SecretStore = {
      kind: local.kind,
      maxPayloadBytes: local.maxPayloadBytes,
      location: local.location,
      secretPath: (id: string) => local.secretPath(id),
      getSecret: (id: string) => local.getSecret(id),
      createSecret: (id: string, labels: Record<string, string>) => local.createSecret(id, labels),
      accessLatestEnabled: (id: string) => local.accessLatestEnabled(id),
      accessVersion: (id: string, v: string) => local.accessVersion(id, v),
      addVersion: (id: string, data: Buffer) => local.addVersion(id, data),
      describe: (id: string) => local.describe(id),
      deleteSecret: (id: string) => local.deleteSecret(id),
      close: () => local.close(),
    };
    const wrapped = withRateLimits(plain, buckets);
    assert.ok(
      !('disableVersion' in wrapped) && !('enableVersion' in wrapped) && !('destroyVersion' in wrapped),
    );
  });
});

test('quotaLimits builds one bucket per declared quota, overrides win, and nothing declared means none', () => {
  assert.deepEqual(quotaLimits({}), {}, 'an unmetered store gets no bucket');
  const limits = quotaLimits(
    { writesPerMinute: 600, readsPerMinute: 600 },
    { readsPerMinute: 120, accessesPerMinute: 90_000 },
  );
  assert.deepEqual(Object.keys(limits).sort(), ['accesses', 'reads', 'writes']);
  assert.equal(limits.writes?.burst, 10, 'declared: 600 a minute holds 10');
  assert.equal(limits.reads?.burst, 2, 'the override wins: 120 a minute holds 2');
  assert.equal(limits.accesses?.burst, 1500);
});

test("a quota error drains the call's bucket: the retry and every other caller wait for fresh tokens", async () => {
  let failNext = true;
  let added = 0;
  const flaky = {
    kind: 'test',
    addVersion: async () => {
      if (failNext) {
        failNext = false;
        throw new PullSecretError('STORE_QUOTA_EXCEEDED', 'Quota exceeded for quota metric Write requests');
      }
      added += 1;
      return { version: String(added), path: `v/${added}`, state: 'ENABLED' as const, createdTime: '' };
    },
  } as unknown as SecretStore;
  const writes = new TokenBucket(600, 5); // 10 a second, 5 at once
  const observer = recordingObserver();
  const store = withRateLimits(flaky, { writes }, observer);
  await assert.rejects(store.addVersion('s', Buffer.from('x')), { code: 'STORE_QUOTA_EXCEEDED' });
  assert.ok(writes.available < 0.5, `drained, not 4 tokens left: ${writes.available}`);
  const started = performance.now();
  await Promise.all([store.addVersion('s', Buffer.from('x')), store.addVersion('s', Buffer.from('x'))]);
  // Without the drain both would pass at once (4 tokens were left); with it, two fresh tokens at 10/s.
  assert.ok(performance.now() - started >= 190);
  assert.deepEqual(observer.waits, ['writes', 'writes']);
  assert.equal(added, 2);
});

test('another error leaves the bucket as it is', async () => {
  const failing = {
    kind: 'test',
    getSecret: async () => {
      throw new PullSecretError('STORE_UNAVAILABLE', 'unavailable');
    },
  } as unknown as SecretStore;
  const reads = new TokenBucket(600, 5);
  const store = withRateLimits(failing, { reads });
  await assert.rejects(store.getSecret('s'), { code: 'STORE_UNAVAILABLE' });
  assert.ok(reads.available >= 3.9);
});

test('an abort while waiting for a token rejects with ABORTED and never calls the store', async () => {
  await withLocalStore(async (local) => {
    const accesses = new TokenBucket(60, 1); // 1 a second
    const store = withRateLimits(local, { accesses });
    await assert.rejects(store.accessLatestEnabled('absent'), { code: 'SECRET_NOT_FOUND' });
    const controller = new AbortController();
    const waiting = store.accessVersion('absent', '1', { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    // The store would have answered SECRET_NOT_FOUND: ABORTED means it was never called.
    await assert.rejects(waiting, { code: 'ABORTED' });
  });
});
