import { z } from 'zod';
import {
  DEFAULT_MANIFEST_DIR,
  KUBERNETES_TARGET_KINDS,
  managementNamespaceSchema,
} from '../kube/target-config.js';
import { isStoreKind, STORE_KINDS } from '../stores/registry.js';
import { DEFAULT_RETRY } from '../util/retry.js';

/**
 * The configuration sections the job and the adapter share: one schema and one set of defaults
 * each, so `KUBERNETES_TARGET`, `RETRY_*`, `LOG_LEVEL`, `SECRET_STORE` and the store settings mean
 * the same in both. Light on purpose: the job imports this, and nothing here loads an SDK.
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

const kubernetesShape = {
  target: z
    .enum(KUBERNETES_TARGET_KINDS, { message: `must be one of ${KUBERNETES_TARGET_KINDS.join(', ')}` })
    .optional(),
  manifestDir: z.string().min(1).default(DEFAULT_MANIFEST_DIR),
  kubeconfig: z.string().min(1).optional(),
};

/**
 * Where the Kubernetes Secret goes. `target` unset means `none`, or `api` when a management
 * namespace is given (only the job has one: the adapter takes it from each cluster); the same rule
 * for job and adapter.
 */
export const kubernetesSectionSchema = z
  .object(kubernetesShape)
  .strict()
  .transform((k) => ({ ...k, target: k.target ?? ('none' as const) }));

/** The job's Kubernetes section: the shared one plus the management namespace. */
export const jobKubernetesSectionSchema = z
  .object({ ...kubernetesShape, namespace: managementNamespaceSchema.optional() })
  .strict()
  .transform((k) => ({
    ...k,
    target: k.target ?? (k.namespace !== undefined ? ('api' as const) : ('none' as const)),
  }));

/**
 * The store: its kind (unset: chosen from the environment, see `selectStoreKind`), its own
 * settings (checked by the store's `validate`), and its per-scope quotas for writes, metadata
 * reads and payload accesses (default: the quotas the store declares).
 */
export const storeSectionSchema = z
  .object({
    type: z
      .string()
      .refine(isStoreKind, { message: `must be one of ${STORE_KINDS.join(', ')}` })
      .optional(),
    settings: z.record(z.string(), z.unknown()).default({}),
    writesPerMinute: wholeNumber(1, 1_000_000).optional(),
    readsPerMinute: wholeNumber(1, 1_000_000).optional(),
    accessesPerMinute: wholeNumber(1, 10_000_000).optional(),
  })
  .strict();

export type StoreSection = z.output<typeof storeSectionSchema>;
export type KubernetesSection = z.output<typeof kubernetesSectionSchema>;
