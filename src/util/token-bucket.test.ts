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

test('drain empties the bucket: the next caller waits for a fresh token, later ones queue behind it', async () => {
  const bucket = new TokenBucket(600, 10); // 10/s, burst 10
  assert.equal(await bucket.acquire(), false, 'a full bucket does not make the caller wait');
  assert.ok(bucket.available >= 8.9 && bucket.available <= 10);
  bucket.drain();
  assert.ok(bucket.available < 0.5, 'drained');
  const started = performance.now();
  const waits = await Promise.all([bucket.acquire(), bucket.acquire()]);
  // Two tokens at 10/s after a drain cannot be had in less than ~200 ms (a lower bound).
  assert.ok(performance.now() - started >= 190);
  assert.deepEqual(waits, [true, true], 'both report that they waited');
});

test('the window sets the rate: 5 per 100 ms paces like 3000 a minute', async () => {
  const bucket = new TokenBucket(5, 1, 100); // 50/s, burst 1
  const started = performance.now();
  for (let i = 0; i < 6; i++) await bucket.acquire();
  assert.ok(performance.now() - started >= 95);
  assert.throws(() => new TokenBucket(5, 1, 0), RangeError);
  assert.throws(() => new TokenBucket(5, 0), RangeError);
});

test('an abort while queued behind others rejects at once and takes no token', async () => {
  const bucket = new TokenBucket(60, 1); // 1/s
  await bucket.acquire();
  const first = bucket.acquire(); // waits about a second
  const controller = new AbortController();
  const queued = bucket.acquire(controller.signal);
  const started = performance.now();
  controller.abort();
  await assert.rejects(queued, { code: 'ABORTED' });
  assert.ok(performance.now() - started < 900, 'rejected before the token ahead of it was due');
  await assert.rejects(bucket.acquire(AbortSignal.abort()), { code: 'ABORTED' });
  assert.equal(await first, true, 'the waiter ahead is unaffected');
});
