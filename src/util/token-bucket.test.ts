import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TokenBucket } from './token-bucket.js';

test('paces acquisitions beyond the burst to the rate', async () => {
  const bucket = new TokenBucket(6000, 5); // 100/s, burst 5
  const started = performance.now();
  for (let i = 0; i < 15; i++) await bucket.acquire();
  // The 10 tokens beyond the burst cannot be had in less than ~100 ms at 100/s (a lower bound:
  // a busy machine can only make this slower, never faster).
  assert.ok(performance.now() - started >= 90);
});

test('an abort while waiting rejects with ABORTED and does not block later waiters', async () => {
  const bucket = new TokenBucket(60, 1); // 1/s
  await bucket.acquire();
  const controller = new AbortController();
  const waiting = bucket.acquire(controller.signal);
  controller.abort();
  await assert.rejects(waiting, { code: 'ABORTED' });
  assert.throws(() => new TokenBucket(0), RangeError);
});
