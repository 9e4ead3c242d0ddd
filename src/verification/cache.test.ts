import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VerdictCache } from './cache.js';

test('verdicts expire after the TTL; unreachable is never kept; the key is a hash, not the credential', () => {
  let now = 1_000;
  const cache = new VerdictCache(60_000, () => now);
  const key = VerdictCache.key('quay.io', 'user', 'pass-word');
  assert.match(key, /^[0-9a-f]{64}$/);
  assert.ok(!key.includes('pass-word'));
  assert.notEqual(key, VerdictCache.key('quay.io', 'user', 'other-password'));
  assert.notEqual(key, VerdictCache.key('quay.io', 'userp', 'ass-word'));
  cache.set(key, 'accepted', 'ok');
  assert.equal(cache.get(key)?.outcome, 'accepted');
  now += 60_000;
  assert.equal(cache.get(key), undefined);
  cache.set(key, 'unreachable', 'down');
  assert.equal(cache.get(key), undefined);
  assert.equal(cache.size, 0);
});

test('a TTL of 0 turns the cache off', () => {
  const cache = new VerdictCache(0);
  const key = VerdictCache.key('h', 'u', 'p');
  cache.set(key, 'rejected', '401');
  assert.equal(cache.get(key), undefined);
});
