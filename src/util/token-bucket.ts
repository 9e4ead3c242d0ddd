import { setTimeout as sleep } from 'node:timers/promises';
import { PullSecretError } from '../errors/index.js';

/**
 * A token bucket: at most `perMinute` acquisitions a minute on average, bursts up to `burst`.
 * Waiters are served in order, so a burst of clusters queues instead of failing with
 * RESOURCE_EXHAUSTED at the cloud API.
 */
export class TokenBucket {
  private tokens: number;
  private last = performance.now();
  private tail: Promise<void> = Promise.resolve();
  private readonly perMs: number;

  constructor(
    perMinute: number,
    private readonly burst = Math.max(1, Math.ceil(perMinute / 60)),
  ) {
    if (!(perMinute > 0)) throw new RangeError('perMinute must be positive');
    this.perMs = perMinute / 60_000;
    this.tokens = burst;
  }

  /** Waits for a token. @throws ABORTED when `signal` fires while waiting. */
  acquire(signal?: AbortSignal): Promise<void> {
    const turn = this.tail.then(() => this.take(signal));
    // The next waiter queues behind this one whether it succeeds or not.
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  private async take(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const now = performance.now();
      this.tokens = Math.min(this.burst, this.tokens + (now - this.last) * this.perMs);
      this.last = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      try {
        await sleep(Math.ceil((1 - this.tokens) / this.perMs), undefined, { signal });
      } catch (err) {
        throw new PullSecretError('ABORTED', 'aborted while waiting for the write rate limit', { cause: err });
      }
    }
  }
}
