import assert from 'node:assert/strict';
import { it } from 'node:test';
import { FailureLimiter } from './failure-limiter.js';

it('refuses a client after its failures until its window ends, per address', () => {
  let now = 1_000_000;
  const limiter = new FailureLimiter({ maxFailures: 3, windowMs: 60_000, clock: () => now });
  for (let i = 0; i < 3; i++) {
    assert.equal(limiter.retryAfterSeconds('10.0.0.1'), 0);
    limiter.fail('10.0.0.1');
  }
  assert.equal(limiter.retryAfterSeconds('10.0.0.1'), 60);
  assert.equal(limiter.retryAfterSeconds('10.0.0.2'), 0, 'another address is not affected');
  now += 59_500;
  assert.equal(limiter.retryAfterSeconds('10.0.0.1'), 1);
  now += 500;
  assert.equal(limiter.retryAfterSeconds('10.0.0.1'), 0, 'a new window');
});
