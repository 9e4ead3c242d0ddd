import { z } from 'zod';
import { parseEnv, throwEnvProblems, type EnvMapping, type EnvParse } from '../config/env.js';
import { envFor, sectionEnv } from '../stores/config-env.js';
import { logLevelSchema, retrySectionSchema } from '../config/sections.js';
import { jobKubernetesSectionSchema } from '../kube/config-section.js';
import type { KubernetesTargetConfig } from '../kube/target-config.js';
import { parseStoreEnv, selectStoreKind } from '../stores/registry.js';
import type { RetryPolicy } from '../util/retry.js';
import type { RetentionSection } from '../retention/config.js';
import { parseRetentionEnv, parseVerificationEnv, type JobVerificationSettings } from './lifecycle.js';

const jobSchema = z.object({
  clusterId: z.string(),
  pullSecretData: z.string(),
  secretName: z.string().optional(),
  resultsPath: z.string().optional(),
  terminationMessagePath: z.string().optional(),
  transferRecords: z.enum(['true', 'false'], { message: 'must be true or false' }).optional(),
});

/**
 * The job's environment variables (store settings excluded: each store declares its own). The
 * shared ones (`SECRET_STORE`, `KUBERNETES_TARGET`, `RETRY_*`, `LOG_LEVEL`) are the adapter's
 * settings under the same names, parsed by the same schemas (`src/config/`).
 */
export const JOB_ENV: EnvMapping = {
  ...Object.fromEntries(
    Object.entries(envFor('job'))
      .filter(([, v]) => v.store === undefined)
      .map(([name, v]) => [name, { key: v.path, help: v.help }]),
  ),
  JOB_TIMEOUT: {
    key: 'timeoutSeconds',
    help: 'Seconds before a stuck job ends with a failure result, reason JobTimeout (default 240).',
  },
};

/**
 * Default `JOB_TIMEOUT`: well under the upstream Job's `activeDeadlineSeconds` (310 s), so the job
 * writes its failure result before Kubernetes kills the pod.
 */
const DEFAULT_JOB_TIMEOUT_SECONDS = 240;

const timeoutSchema = z.object({
  timeoutSeconds: z.coerce.number().int().min(1).max(86_400).default(DEFAULT_JOB_TIMEOUT_SECONDS),
});

/** Everything the pull secret job needs, read from the environment. */
export interface JobConfig {
  clusterId: string;
  pullSecretData: string;
  secretName?: string;
  storeKind: string;
  resultsPath?: string;
  /** Where the short report for the adapter goes (`TERMINATION_MESSAGE_PATH`, set by Job mode). */
  terminationMessagePath?: string;
  /**
   * Merge the applied-transfer record beside the secret into the pull secret (`TRANSFER_RECORDS=true`;
   * docs/account-service.md).
   */
  transferRecords: boolean;
  /** `JOB_TIMEOUT`: the run ends as a failure (reason JobTimeout) after this many seconds. */
  timeoutSeconds: number;
  retry: RetryPolicy;
  logLevel: string;
  /** The selected store's kind and parsed settings (see `createStore`). */
  store: { kind: string; config: unknown };
  /** Where the Kubernetes Secret goes after the store step (`target: none` = nowhere). */
  kubernetes: KubernetesTargetConfig;
  /** Registry verification before a write (`VERIFICATION_*`; mode off by default). */
  verification: JobVerificationSettings;
  /** One retention pass after the push (`RETENTION_*`; off by default). */
  retention: RetentionSection;
}

/** Parses one shared section from its variables (`RETRY_*` → `execution.retry`). */
function section<T>(schema: z.ZodType<T>, prefix: string, env: NodeJS.ProcessEnv): EnvParse<T> {
  return parseEnv(schema, sectionEnv('job', prefix), env);
}

/**
 * Reads the job's and the selected store's settings from `env`, reporting every missing or invalid
 * variable at once. The store is `SECRET_STORE`, or the store whose settings are set (the upstream
 * chart sets `GCP_PROJECT_ID` and no `SECRET_STORE`: GCP), or the local store.
 *
 * @throws PullSecretError CONFIG_MISSING (`missing required environment variable: NAME`, one line
 *   each) or CONFIG_INVALID (also for `SECRET_STORE=local` with `GCP_PROJECT_ID`); both exit 2.
 */
export function loadJobConfig(env: NodeJS.ProcessEnv): JobConfig {
  const job = section(jobSchema, 'job', env);
  const retry = section(retrySectionSchema, 'execution.retry', env);
  const kubernetes = section(jobKubernetesSectionSchema, 'kubernetes', env);
  const logLevel = parseEnv(
    z.object({ logLevel: logLevelSchema.default('info') }),
    { LOG_LEVEL: { key: 'logLevel', help: '' } },
    env,
  );
  const verification = parseVerificationEnv(env);
  const retention = parseRetentionEnv(env);
  const timeout = parseEnv(timeoutSchema, { JOB_TIMEOUT: JOB_ENV.JOB_TIMEOUT as EnvMapping[string] }, env);
  let kind: string;
  try {
    kind = selectStoreKind(env);
  } catch (err) {
    throwEnvProblems([job, retry, kubernetes, logLevel, verification, retention, timeout]);
    throw err;
  }
  const store = parseStoreEnv(kind, env);
  throwEnvProblems([job, store, retry, kubernetes, logLevel, verification, retention, timeout]);
  if (
    !job.ok ||
    !store.ok ||
    !retry.ok ||
    !kubernetes.ok ||
    !logLevel.ok ||
    !verification.ok ||
    !retention.ok ||
    !timeout.ok
  )
    throw new Error('unreachable: problems were thrown above');
  const v = job.value;
  const k = kubernetes.value;
  return {
    clusterId: v.clusterId,
    pullSecretData: v.pullSecretData,
    secretName: v.secretName,
    storeKind: kind,
    resultsPath: v.resultsPath,
    terminationMessagePath: v.terminationMessagePath,
    transferRecords: v.transferRecords === 'true',
    timeoutSeconds: timeout.value.timeoutSeconds,
    retry: retry.value,
    logLevel: logLevel.value.logLevel,
    store: { kind, config: store.value },
    kubernetes: {
      target: k.target,
      namespace: k.namespace,
      manifestDir: k.manifestDir,
      kubeconfigPath: k.kubeconfig,
    },
    verification: verification.value,
    retention: retention.value,
  };
}
