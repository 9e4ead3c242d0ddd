import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalStore } from './local/index.js';
import { withWriteRateLimit } from './rate-limited-store.js';
import type { TokenBucket } from '../util/token-bucket.js';

test('writes take a token from the bucket; reads do not', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-rate-'));
  let tokens = 0;
  const bucket = { acquire: async () => void tokens++ } as unknown as TokenBucket;
  const store = withWriteRateLimit(new LocalStore({ dir }), bucket);
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
