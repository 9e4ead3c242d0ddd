import { z } from 'zod';
import { durationMsSchema } from '../util/duration.js';
import { DEFAULT_ENTITLEMENT_ARCH } from './entitlement.js';

/** A duration as `30m`, `8h`, `1d`, or a number of milliseconds; parsed to ms. */
const duration = durationMsSchema('must be a duration such as 30m, 8h or 1d');

/**
 * The adapter's `entitlements` section (docs/account-service.md, "Entitlement certificates"): each
 * cluster's simple-content-access certificate is refreshed every `interval` (first refreshes spread
 * over `jitter` of it) and when its pull secret changes. Off unless `enabled`; needs `accountService`.
 */
export const entitlementsSectionSchema = z
  .object({
    enabled: z.boolean().default(false),
    interval: duration
      .default(8 * 3_600_000)
      .refine((ms) => ms >= 1000 && ms <= 7 * 86_400_000, 'must be between 1s and 7d'),
    jitter: z.coerce
      .number()
      .min(0, 'must be between 0 and 1')
      .max(1, 'must be between 0 and 1')
      .default(0.5),
    arch: z
      .string()
      .regex(/^[a-z0-9_]{1,32}$/, 'must be 1-32 lowercase letters, digits or "_" (e.g. x86_64, aarch64)')
      .default(DEFAULT_ENTITLEMENT_ARCH),
    requestsPerSecond: z.coerce
      .number()
      .positive('must be above 0')
      .max(10_000, 'must be at most 10000')
      .default(5),
  })
  .strict()
  .prefault({});

/** The validated `entitlements` section. */
type EntitlementsSection = z.output<typeof entitlementsSectionSchema>;

/** `entitlements.enabled` needs an `accountService` section; one line per problem. */
export function entitlementsProblems(config: {
  entitlements: EntitlementsSection;
  accountService?: unknown;
}): string[] {
  return config.entitlements.enabled && config.accountService === undefined
    ? ['entitlements.enabled needs an accountService section (accountService.baseUrl)']
    : [];
}
