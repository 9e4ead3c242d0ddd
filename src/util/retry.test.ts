import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay, withRetry } from './retry.js';
import { PullSecretError } from '../errors/index.js';

const fast = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 4 };

test('retries retryable errors and returns the first success', async () => {
  let calls = 0;
  const retries: number[] = [];
  const value = await withRetry(
    fast,
    async (attempt) => {
      calls++;
      if (attempt < 3) throw new PullSecretError('STORE_UNAVAILABLE', 'down');
      return 'ok';
    },
    { onRetry: ({ attempt }) => retries.push(attempt) },
  );
  assert.equal(value, 'ok');
  assert.equal(calls, 3);
  assert.deepEqual(retries, [1, 2]);
});

test('permanent errors fail at once; attempts are bounded', async () => {
  let calls = 0;
  await assert.rejects(
    withRetry(fast, async () => {
      calls++;
      throw new PullSecretError('STORE_PERMISSION_DENIED', 'no');
    }),
    { code: 'STORE_PERMISSION_DENIED' },
  );
  assert.equal(calls, 1);
  calls = 0;
  await assert.rejects(
    withRetry(fast, async () => {
      calls++;
      throw new PullSecretError('STORE_QUOTA_EXCEEDED', 'slow down');
    }),
    { code: 'STORE_QUOTA_EXCEEDED' },
  );
  assert.equal(calls, 3);
});

test('backoff doubles, is capped, and jitters within ±20 %', () => {
  const policy = { maxAttempts: 9, baseDelayMs: 100, maxDelayMs: 1000 };
  assert.equal(
    backoffDelay(policy, 1, () => 0.5),
    100,
  );
  assert.equal(
    backoffDelay(policy, 3, () => 0.5),
    400,
  );
  assert.equal(
    backoffDelay(policy, 8, () => 0.5),
    1000,
  );
  assert.equal(
    backoffDelay(policy, 1, () => 0),
    80,
  );
  assert.equal(
    backoffDelay(policy, 1, () => 1),
    120,
  );
});

test('an abort while waiting ends the retries', async () => {
  const controller = new AbortController();
  const slow = { maxAttempts: 5, baseDelayMs: 10_000, maxDelayMs: 10_000 };
  const pending = withRetry(
    slow,
    async () => {
      throw new PullSecretError('STORE_TIMEOUT', 't');
    },
    { signal: controller.signal },
  );
  setTimeout(() => controller.abort(), 10);
  await assert.rejects(pending, { code: 'ABORTED' });
});

test("a server's Retry-After is honoured when it is longer than the backoff", async () => {
  const delays: number[] = [];
  let calls = 0;
  const started = performance.now();
  const value = await withRetry(
    fast,
    async () => {
      calls++;
      if (calls === 1) throw new PullSecretError('STORE_QUOTA_EXCEEDED', 'throttled', { retryAfterMs: 120 });
      if (calls === 2) throw new PullSecretError('STORE_UNAVAILABLE', 'down');
      return 'ok';
    },
    { onRetry: ({ delayMs }) => delays.push(delayMs) },
  );
  assert.equal(value, 'ok');
  assert.equal(delays[0], 120, 'the server asked for 120 ms; the backoff alone is at most 1.2 ms');
  assert.ok((delays[1] ?? 0) <= 4, 'an error without Retry-After keeps the plain backoff');
  assert.ok(performance.now() - started >= 115, 'the wait really happened');
});
