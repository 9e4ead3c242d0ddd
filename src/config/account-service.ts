import { z } from 'zod';
import { durationMsSchema } from '../util/duration.js';

const count = (min: number, max: number) =>
  z.coerce
    .number({ message: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

/** A duration as `500ms`, `30s`, `10m`, `12h`, `1d`, or a number of milliseconds; parsed to ms. */
const duration = durationMsSchema('must be a duration such as 30m, 12h or 1d');

/**
 * `accountService`: where the account service is (docs/account-service.md) and how often each
 * cluster's transfer is checked. `interval` sets the 5xx backoff too (interval/24, doubling, 5
 * steps); `jitter` is the share of the interval each cluster's check is spread over.
 */
export const accountServiceSectionSchema = z
  .object({
    baseUrl: z.string().url('must be a URL such as https://api.openshift.com'),
    tokenFile: z.string().min(1).optional(),
    caFile: z.string().min(1).optional(),
    timeoutMs: count(100, 300_000).default(10_000),
    transfer: z
      .object({
        interval: duration
          .default(12 * 3_600_000)
          .refine((ms) => ms >= 1000 && ms <= 7 * 86_400_000, 'must be between 1s and 7d'),
        jitter: z.coerce
          .number()
          .min(0, 'must be between 0 and 1')
          .max(1, 'must be between 0 and 1')
          .default(0.5),
        requestsPerSecond: z.coerce
          .number()
          .positive('must be above 0')
          .max(10_000, 'must be at most 10000')
          .default(5),
      })
      .strict()
      .prefault({}),
  })
  .strict();

/** Where a cluster's pull secret comes from: the cluster spec, or the account service. */
export const pullSecretSourceSchema = z.enum(['spec', 'account-service'], {
  message: 'must be spec or account-service',
});

/** `pullSecretSource`: `spec` or `account-service`. */
export type PullSecretSourceKind = z.output<typeof pullSecretSourceSchema>;

export type AccountServiceSection = z.output<typeof accountServiceSectionSchema>;

/** `pullSecretSource: account-service` needs an `accountService` section; one line per problem. */
export function accountServiceProblems(config: {
  accountService?: AccountServiceSection;
  pullSecretSource: PullSecretSourceKind;
}): string[] {
  if (config.pullSecretSource === 'account-service' && config.accountService === undefined) {
    return ['pullSecretSource: account-service needs an accountService section (accountService.baseUrl)'];
  }
  return [];
}
