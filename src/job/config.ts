import { z } from 'zod';
import { parseEnv, throwEnvProblems, type EnvMapping } from '../config/env.js';
import { DEFAULT_STORE_KIND, isStoreKind, parseStoreEnv, STORE_KINDS } from '../stores/registry.js';
import { DEFAULT_RETRY, type RetryPolicy } from '../util/retry.js';
import { PullSecretError } from '../errors/index.js';
import { KUBERNETES_TARGET_ENV, kubernetesTargetSchema, type KubernetesTargetConfig } from '../kube/target-config.js';

const positiveInt = (max: number) =>
  z.coerce.number({ message: 'must be a whole number' }).int('must be a whole number').min(1, 'must be at least 1').max(max, `must be at most ${max}`);

const jobSchema = z.object({
  clusterId: z.string(),
  pullSecretData: z.string(),
  secretName: z.string().optional(),
  storeKind: z.string().default(DEFAULT_STORE_KIND),
  resultsPath: z.string().optional(),
  retryMaxAttempts: positiveInt(20).default(DEFAULT_RETRY.maxAttempts),
  retryBaseDelayMs: positiveInt(600_000).default(DEFAULT_RETRY.baseDelayMs),
  retryMaxDelayMs: positiveInt(600_000).default(DEFAULT_RETRY.maxDelayMs),
  logLevel: z.enum(['debug', 'info', 'warn', 'error'], { message: 'must be debug, info, warn or error' }).default('info'),
});

/** The job's own environment variables (the store's come from its factory). */
export const JOB_ENV = {
  CLUSTER_ID: { key: 'clusterId', help: 'Cluster id (required); lowercase, used in labels and names.' },
  PULL_SECRET_DATA: { key: 'pullSecretData', help: 'Pull secret JSON, {"auths":{...}} (required).' },
  SECRET_NAME: { key: 'secretName', help: 'Cloud secret id (default hyperfleet-{CLUSTER_ID}-pull-secret).' },
  SECRET_STORE: { key: 'storeKind', help: `Secret store: ${STORE_KINDS.join(' | ')} (default ${DEFAULT_STORE_KIND}).` },
  RESULTS_PATH: { key: 'resultsPath', help: 'Write a JSON result file here for a status reporter (optional).' },
  RETRY_MAX_ATTEMPTS: { key: 'retryMaxAttempts', help: `Attempts per step on transient errors (default ${DEFAULT_RETRY.maxAttempts}).` },
  RETRY_BASE_DELAY_MS: { key: 'retryBaseDelayMs', help: `First retry delay in ms, doubled each retry (default ${DEFAULT_RETRY.baseDelayMs}).` },
  RETRY_MAX_DELAY_MS: { key: 'retryMaxDelayMs', help: `Largest retry delay in ms (default ${DEFAULT_RETRY.maxDelayMs}).` },
  LOG_LEVEL: { key: 'logLevel', help: 'debug | info | warn | error (default info).' },
} as const satisfies EnvMapping;

/** Everything the pull secret job needs, read from the environment. */
export interface JobConfig {
  clusterId: string;
  pullSecretData: string;
  secretName?: string;
  storeKind: string;
  resultsPath?: string;
  retry: RetryPolicy;
  logLevel: string;
  /** The selected store's kind and parsed settings (see `createStore`). */
  store: { kind: string; config: unknown };
  /** Where the Kubernetes Secret goes after the store step (`target: none` = nowhere). */
  kubernetes: KubernetesTargetConfig;
}

/**
 * Reads the job's and the selected store's settings from `env`, reporting every missing or
 * invalid variable at once.
 *
 * @throws PullSecretError CONFIG_MISSING (`missing required environment variable: NAME`, one line
 *   each) or CONFIG_INVALID; both exit 2.
 */
export function loadJobConfig(env: NodeJS.ProcessEnv): JobConfig {
  const job = parseEnv(jobSchema, JOB_ENV, env);
  const kind = env.SECRET_STORE || DEFAULT_STORE_KIND;
  if (!isStoreKind(kind)) {
    throwEnvProblems([job]);
    throw new PullSecretError('CONFIG_INVALID', `invalid environment variable SECRET_STORE: must be one of ${STORE_KINDS.join(', ')}`);
  }
  const store = parseStoreEnv(kind, env);
  const kubernetes = parseEnv(kubernetesTargetSchema, KUBERNETES_TARGET_ENV, env);
  throwEnvProblems([job, store, kubernetes]);
  if (!job.ok || !store.ok || !kubernetes.ok) throw new Error('unreachable: problems were thrown above');
  const v = job.value;
  if (v.retryMaxDelayMs < v.retryBaseDelayMs) {
    throw new PullSecretError('CONFIG_INVALID', 'invalid environment variable RETRY_MAX_DELAY_MS: must not be below RETRY_BASE_DELAY_MS');
  }
  return {
    clusterId: v.clusterId,
    pullSecretData: v.pullSecretData,
    secretName: v.secretName,
    storeKind: kind,
    resultsPath: v.resultsPath,
    retry: { maxAttempts: v.retryMaxAttempts, baseDelayMs: v.retryBaseDelayMs, maxDelayMs: v.retryMaxDelayMs },
    logLevel: v.logLevel,
    store: { kind, config: store.value },
    kubernetes: kubernetes.value,
  };
}
