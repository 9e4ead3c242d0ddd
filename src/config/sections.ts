import { z } from 'zod';
import { DEFAULT_RETRY } from '../util/retry.js';

/**
 * The configuration sections the job and the adapter share: one schema and one set of defaults
 * each, so `RETRY_*` and `LOG_LEVEL` mean the same in both (the Kubernetes and store sections are
 * their folders': src/kube/config-section.ts, src/stores/config-section.ts). Light on purpose: the
 * job imports this, and nothing here loads an SDK.
 */

/** A whole number in [min, max], from a number or its string (an environment variable). */
export const wholeNumber = (min: number, max: number) =>
  z.coerce
    .number({ message: 'must be a whole number' })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

/** Backoff of transient errors, per step (store calls, API calls). */
export const retrySectionSchema = z
  .object({
    maxAttempts: wholeNumber(1, 20).default(DEFAULT_RETRY.maxAttempts),
    baseDelayMs: wholeNumber(1, 600_000).default(DEFAULT_RETRY.baseDelayMs),
    maxDelayMs: wholeNumber(1, 600_000).default(DEFAULT_RETRY.maxDelayMs),
  })
  .strict()
  .refine((r) => r.maxDelayMs >= r.baseDelayMs, {
    message: 'must not be above the largest delay (maxDelayMs, RETRY_MAX_DELAY_MS)',
    path: ['baseDelayMs'],
  });

/** `debug | info | warn | error`. */
export const logLevelSchema = z.enum(['debug', 'info', 'warn', 'error'], {
  message: 'must be debug, info, warn or error',
});
