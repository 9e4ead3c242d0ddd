import { z } from 'zod';
import { DEFAULT_RETENTION_POLICY } from './plan.js';

/**
 * The adapter's `retention` section (docs/retention.md): superseded versions stay enabled for
 * `graceHours`, are then disabled, and destroyed `retentionDays` after they were superseded; at
 * most `keepVersions` versions are kept. Off unless `enabled`. The retention must outlast the grace.
 */
export const retentionSectionSchema = z
  .object({
    enabled: z.boolean().default(false),
    graceHours: z.coerce.number().min(0).max(8760).default(DEFAULT_RETENTION_POLICY.graceHours),
    retentionDays: z.coerce.number().min(1).max(3650).default(DEFAULT_RETENTION_POLICY.retentionDays),
    keepVersions: z.coerce.number().int().min(1).max(1000).default(DEFAULT_RETENTION_POLICY.keepVersions),
  })
  .strict()
  .refine((r) => r.retentionDays * 24 >= r.graceHours, {
    message: 'retentionDays must be at least graceHours (a version is disabled before it is destroyed)',
    path: ['retentionDays'],
  })
  .prefault({});

/** The validated `retention` section. */
export type RetentionSection = z.output<typeof retentionSectionSchema>;
