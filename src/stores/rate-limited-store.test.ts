import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalStore } from './local/index.js';
import { withRateLimits } from './rate-limited-store.js';
import type { TokenBucket } from '../util/token-bucket.js';

test('writes take a token from the bucket; reads do not', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-rate-'));
  let tokens = 0;
  const bucket = { acquire: async () => void tokens++ } as unknown as TokenBucket;
  const store = withRateLimits(new LocalStore({ dir }), { writes: bucket });
  try {
    await store.createSecret('s1', { 'managed-by': 'hyperfleet' });
    await store.addVersion('s1', Buffer.from('{"auths":{}}'));
    assert.equal(tokens, 2);
    await store.getSecret('s1');
    await store.accessLatestEnabled('s1');
    await store.describe('s1');
    assert.equal(tokens, 2, 'reads are not rate limited');
    await store.deleteSecret('s1');
    assert.equal(tokens, 3);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('with a read bucket, metadata reads take a token and payload reads do not', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-rate-'));
  const taken = { reads: 0, writes: 0 };
  const counting = (key: keyof typeof taken) => ({ acquire: async () => void taken[key]++ }) as unknown as TokenBucket;
  const store = withRateLimits(new LocalStore({ dir }), { reads: counting('reads'), writes: counting('writes') });
  try {
    await store.createSecret('s1', { 'managed-by': 'hyperfleet' });
    await store.addVersion('s1', Buffer.from('{"auths":{}}'));
    await store.getSecret('s1');
    await store.describe('s1');
    await store.accessLatestEnabled('s1');
    await store.accessVersion('s1', '1');
    assert.deepEqual(taken, { reads: 2, writes: 2 });
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
