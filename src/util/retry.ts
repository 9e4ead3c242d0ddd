import { setTimeout as sleep } from 'node:timers/promises';
import { isRetryable, PullSecretError } from '../errors/index.js';

/** How a step is retried: jittered exponential backoff with a cap. */
export interface RetryPolicy {
  /** Total attempts, the first included (1 = no retry). */
  maxAttempts: number;
  /** Delay before the first retry, in ms; doubled each retry. */
  baseDelayMs: number;
  /** Upper bound of any single delay, in ms. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 1000, maxDelayMs: 10_000 };

interface RetryOptions {
  signal?: AbortSignal;
  /** Called before each wait, for logging. */
  onRetry?: (info: { attempt: number; delayMs: number; error: unknown }) => void;
}

/**
 * Delay before retry number `retry` (1-based): exponential, capped, with ±20 % jitter so that many
 * clients failing together do not retry together.
 */
export function backoffDelay(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(exponential * (0.8 + 0.4 * random()));
}

/**
 * Runs `step(attempt)` until it succeeds, throws a non-retryable error, or attempts run out.
 * `attempt` starts at 1, so a step can tell a retry apart (e.g. re-check before repeating a write).
 * A `PullSecretError` carrying the server's `retryAfterMs` (HTTP 429 `Retry-After`) is retried no
 * sooner than that, even when the backoff would be shorter.
 *
 * @throws the last error; ABORTED when `signal` fires while waiting.
 */
export async function withRetry<T>(
  policy: RetryPolicy,
  step: (attempt: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step(attempt);
    } catch (error) {
      if (!isRetryable(error) || attempt >= policy.maxAttempts) throw error;
      const delayMs = Math.max(
        backoffDelay(policy, attempt),
        error instanceof PullSecretError ? (error.retryAfterMs ?? 0) : 0,
      );
      options.onRetry?.({ attempt, delayMs, error });
      try {
        await sleep(delayMs, undefined, { signal: options.signal });
      } catch (abort) {
        throw new PullSecretError('ABORTED', 'operation aborted while waiting to retry', { cause: abort });
      }
    }
  }
}
