import { z } from 'zod';
import { parseEnv, type EnvParse } from '../config/env.js';
import { sectionEnv } from '../stores/config-env.js';
import { retentionSectionSchema, type RetentionSection } from '../retention/config.js';
import { verificationSectionSchema, type VerificationSection } from '../config/verification.js';
import { PullSecretError } from '../errors/index.js';
import { RetentionRunner } from '../retention/runner.js';
import type { RetryPolicy } from '../util/retry.js';
import { readCa, RegistryVerifier, VerificationGate } from '../verification/index.js';

/**
 * Registry verification and retention in Job mode (docs/verification.md, docs/retention.md): the
 * job variables that carry them (`VERIFICATION_*`, `RETENTION_*`), read by the job and projected by
 * the adapter from its `verification` and `retention` sections. The job then runs the same gate
 * and runner as the in-process executor.
 */

/**
 * The job's verification settings: the adapter's section, with the CA as PEM text when the adapter passes it
 * inline.
 */
export type JobVerificationSettings = VerificationSection & { caPem?: string };

/** Largest CA bundle passed inline in a Job spec (`VERIFICATION_CA_PEM`); a Job object must stay small. */
const MAX_INLINE_CA_BYTES = 64 * 1024;

/** A job runs once: a verdict cache would never be asked twice. */
const JOB_CACHE_SECONDS = 0;

const list = (value: unknown): unknown =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0)
    : value;

const verificationEnvSchema = verificationSectionSchema
  .extend({
    registries: z.preprocess(list, verificationSectionSchema.shape.registries),
    caPem: z.string().min(1).optional(),
  })
  .refine((v) => v.caPem === undefined || v.caFile === undefined, {
    message: 'set VERIFICATION_CA_PEM or VERIFICATION_CA_FILE, not both',
    path: ['caPem'],
  })
  .refine((v) => v.mode === 'off' || v.registries.length > 0, {
    message: 'must list at least one registry (or "*") when VERIFICATION_MODE is warn or enforce',
    path: ['registries'],
  });

/** `RETENTION_ENABLED=true|false` as the section's boolean, then the section's own rules. */
const retentionEnvSchema = z
  .looseObject({ enabled: z.enum(['true', 'false'], { message: 'must be true or false' }).optional() })
  .transform(({ enabled, ...rest }) => ({
    ...rest,
    ...(enabled === undefined ? {} : { enabled: enabled === 'true' }),
  }))
  .pipe(retentionSectionSchema as unknown as z.ZodType<RetentionSection, { enabled?: boolean }>);

/** Reads `VERIFICATION_*` (problems collected, not thrown). */
export function parseVerificationEnv(env: NodeJS.ProcessEnv): EnvParse<JobVerificationSettings> {
  // An unset VERIFICATION_REGISTRIES under warn/enforce is reported missing (the refine's path is unset).
  return parseEnv(verificationEnvSchema, sectionEnv('job', 'verification'), env);
}

/** Reads `RETENTION_*` (problems collected, not thrown). */
export function parseRetentionEnv(env: NodeJS.ProcessEnv): EnvParse<RetentionSection> {
  return parseEnv(retentionEnvSchema, sectionEnv('job', 'retention'), env);
}

/**
 * The job's verification gate; undefined when `VERIFICATION_MODE` is off. @throws CONFIG_INVALID when the CA
 * file cannot be read.
 */
export function jobVerificationGate(settings: JobVerificationSettings): VerificationGate | undefined {
  if (settings.mode === 'off') return undefined;
  const { caPem, ...section } = settings;
  const verifier = new RegistryVerifier({
    ...section,
    ...(caPem === undefined ? {} : { ca: caPem }),
    cacheSeconds: JOB_CACHE_SECONDS,
  });
  return new VerificationGate(settings.mode, verifier);
}

/**
 * The job's retention runner; undefined unless `RETENTION_ENABLED=true`. A job is a fresh process,
 * so it lists the secret's versions on every run (docs/retention.md). `clock`: epoch ms (tests).
 */
export function jobRetentionRunner(
  section: RetentionSection,
  retry: RetryPolicy,
  clock?: () => number,
): RetentionRunner | undefined {
  if (!section.enabled) return undefined;
  const { graceHours, retentionDays, keepVersions } = section;
  return new RetentionRunner({
    policy: { graceHours, retentionDays, keepVersions },
    retry,
    ...(clock === undefined ? {} : { clock }),
  });
}

/**
 * The Job variables of the adapter's `verification` and `retention` sections (Job mode). The CA
 * file, a path in the adapter's pod, is read here and passed as PEM text (`VERIFICATION_CA_PEM`, a
 * public certificate, in the Job spec): nothing needs mounting into the Job's pod.
 * @throws CONFIG_INVALID when the CA file cannot be read or is larger than 64 KiB.
 */
export function lifecycleJobEnv(config: {
  verification: VerificationSection;
  retention: RetentionSection;
}): Record<string, string> {
  const { verification, retention } = config;
  return {
    ...(verification.mode === 'off' ? {} : sectionJobEnv('verification', verification)),
    ...(verification.mode === 'off' || verification.caFile === undefined
      ? {}
      : { VERIFICATION_CA_PEM: readInlineCa(verification.caFile) }),
    ...(retention.enabled ? sectionJobEnv('retention', retention) : {}),
  };
}

/**
 * A section's plain values under their job variable names (env-table.ts); the CA is passed by `readInlineCa`, a
 * list joined by commas.
 */
function sectionJobEnv(prefix: 'verification' | 'retention', section: object): Record<string, string> {
  const values = section as Record<string, unknown>;
  const env: Record<string, string> = {};
  for (const [name, { key }] of Object.entries(sectionEnv('job', prefix))) {
    const value = values[key];
    if (key === 'caFile' || key === 'caPem' || value === undefined) continue;
    if (Array.isArray(value)) env[name] = value.join(',');
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      env[name] = String(value);
  }
  return env;
}

function readInlineCa(path: string): string {
  const pem = readCa(path);
  if (Buffer.byteLength(pem) > MAX_INLINE_CA_BYTES) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `verification.caFile is larger than ${MAX_INLINE_CA_BYTES} bytes: Job mode passes it in the Job ` +
        `spec (VERIFICATION_CA_PEM); keep only the registries' CA certificates in it`,
    );
  }
  return pem;
}
