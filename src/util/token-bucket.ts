import { setTimeout as sleep } from 'node:timers/promises';
import { PullSecretError } from '../errors/index.js';

/** What `acquire` resolves to when the token was taken at once: no wait. */
const NO_WAIT: Promise<boolean> = Promise.resolve(false);

/**
 * A token bucket: at most `perWindow` acquisitions per `windowMs` (default a minute) on average,
 * bursts up to `burst`. Waiters are served in order, so a burst of clusters queues instead of
 * failing with RESOURCE_EXHAUSTED at the cloud API.
 */
export class TokenBucket {
  private tokens: number;
  private last = performance.now();
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;
  private readonly perMs: number;

  /** @throws RangeError when `perWindow`, `burst` or `windowMs` is not positive. */
  constructor(
    perWindow: number,
    readonly burst = Math.max(1, Math.ceil(perWindow / 60)),
    windowMs = 60_000,
  ) {
    if (!(perWindow > 0) || !(burst > 0) || !(windowMs > 0))
      throw new RangeError('perWindow, burst and windowMs must be positive');
    this.perMs = perWindow / windowMs;
    this.tokens = burst;
  }

  /**
   * Waits for a token, behind every earlier waiter. Resolves to true when the caller had to wait
   * (the bucket was empty or others were queued), for the waits metric.
   * @throws ABORTED as soon as `signal` fires while waiting (also while queued behind others; the
   *   aborted waiter then takes no token).
   */
  acquire(signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted === true) return Promise.reject(aborted(signal.reason));
    // Nobody waiting and a token at hand (the usual case): taken at once, without queueing.
    if (this.queued === 0 && this.takeNow()) return NO_WAIT;
    const behindOthers = this.queued > 0;
    this.queued += 1;
    const turn = this.tail
      .then(() => (signal?.aborted === true ? Promise.reject(aborted(signal.reason)) : this.take(signal)))
      .finally(() => (this.queued -= 1));
    // The next waiter queues behind this one whether it succeeds or not.
    this.tail = turn.then(
      () => undefined,
      () => undefined,
    );
    const mine = turn.then((slept) => slept || behindOthers);
    if (signal === undefined) return mine;
    return new Promise<boolean>((resolve, reject) => {
      const onAbort = (): void => reject(aborted(signal.reason));
      signal.addEventListener('abort', onAbort, { once: true });
      mine.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** Tokens available now (0 to `burst`), without taking one. */
  get available(): number {
    return Math.min(this.burst, this.tokens + (performance.now() - this.last) * this.perMs);
  }

  /**
   * Empties the bucket and restarts its refill: the backend said the quota is spent (another
   * process shares it, or the quota is lower than declared), so every caller, waiting or to come,
   * waits for fresh tokens.
   */
  drain(): void {
    this.tokens = 0;
    this.last = performance.now();
  }

  /** Refills, then takes a token when one is there; false (nothing taken) otherwise. */
  private takeNow(): boolean {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + (now - this.last) * this.perMs);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private async take(signal?: AbortSignal): Promise<boolean> {
    let slept = false;
    for (;;) {
      if (this.takeNow()) return slept;
      try {
        slept = true;
        await sleep(Math.ceil((1 - this.tokens) / this.perMs), undefined, { signal });
      } catch (err) {
        throw aborted(err);
      }
    }
  }
}

function aborted(cause: unknown): PullSecretError {
  return new PullSecretError('ABORTED', 'aborted while waiting for the rate limit', { cause });
}
