import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { brokerConfigSchema } from '../brokers/config.js';
import { PullSecretError } from '../errors/index.js';
import { KUBERNETES_TARGET_KINDS, DEFAULT_MANIFEST_DIR } from '../kube/target-config.js';
import { isStoreKind, storeConfigSchema, STORE_KINDS } from '../stores/registry.js';
import { DEFAULT_RETRY } from '../util/retry.js';
import { deepFreeze } from '../util/deep-freeze.js';
import { fieldPathsSchema } from './cluster-params.js';
import { ENV_OVERRIDES } from './env-overrides.js';
import { DEFAULT_PRECONDITIONS, Preconditions, preconditionSchema } from './preconditions.js';

/** The image Jobs run unless configured (it holds the `pull-secret` CLI). */
const JOB_IMAGE = 'quay.io/openshift-hyperfleet/pull-secret:latest';

const count = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const port = count(0, 65_535);

/**
 * The adapter's configuration (YAML file, then environment overrides; see `ENV_OVERRIDES`).
 * Validated once at start; every problem is reported at once; the result is frozen.
 */
export const adapterConfigSchema = z
  .object({
    hyperfleetApi: z
      .object({
        baseUrl: z.string().url('must be a URL such as http://hyperfleet-api:8000'),
        tokenFile: z.string().min(1).optional(),
        caFile: z.string().min(1).optional(),
        timeoutMs: count(100, 300_000).default(10_000),
      })
      .strict(),
    broker: brokerConfigSchema,
    store: z
      .object({
        type: z.string().refine(isStoreKind, { message: `must be one of ${STORE_KINDS.join(', ')}` }).default('local'),
        /** The store's own settings (for gcp: endpoint, insecure, callTimeoutMs; the project comes from each cluster). */
        settings: z.record(z.string(), z.unknown()).default({}),
        writesPerMinute: count(1, 1_000_000).default(600),
      })
      .strict()
      .default({ type: 'local', settings: {}, writesPerMinute: 600 }),
    kubernetes: z
      .object({
        target: z.enum(KUBERNETES_TARGET_KINDS).default('manifests'),
        manifestDir: z.string().min(1).default(DEFAULT_MANIFEST_DIR),
        kubeconfig: z.string().min(1).optional(),
      })
      .strict()
      .default({ target: 'manifests', manifestDir: DEFAULT_MANIFEST_DIR }),
    execution: z
      .object({
        mode: z.enum(['in-process', 'job']).default('in-process'),
        concurrency: count(1, 1000).default(16),
        retry: z
          .object({ maxAttempts: count(1, 20), baseDelayMs: count(1, 600_000), maxDelayMs: count(1, 600_000) })
          .strict()
          .default(DEFAULT_RETRY),
        job: z
          .object({
            namespace: z.string().min(1).default('hyperfleet-system'),
            image: z.string().min(1).default(JOB_IMAGE),
            /** The Job's activeDeadlineSeconds. */
            timeoutSeconds: count(1, 3600).default(300),
            /** How long one event waits for its Job before reporting JobInProgress. */
            waitSeconds: count(1, 3600).default(60),
          })
          .strict()
          .default({ namespace: 'hyperfleet-system', image: JOB_IMAGE, timeoutSeconds: 300, waitSeconds: 60 }),
      })
      .strict()
      .default({ mode: 'in-process', concurrency: 16, retry: DEFAULT_RETRY, job: { namespace: 'hyperfleet-system', image: JOB_IMAGE, timeoutSeconds: 300, waitSeconds: 60 } }),
    preconditions: z
      .object({
        rules: z.array(preconditionSchema).default([...DEFAULT_PRECONDITIONS]),
        fieldPaths: fieldPathsSchema.default(fieldPathsSchema.parse({})),
      })
      .strict()
      .default({ rules: [...DEFAULT_PRECONDITIONS], fieldPaths: fieldPathsSchema.parse({}) }),
    deletion: z
      .object({ cloudSecret: z.enum(['retain', 'delete']).default('retain') })
      .strict()
      .default({ cloudSecret: 'retain' }),
    server: z
      .object({ healthPort: port.default(8080), metricsPort: port.default(9090), host: z.string().default('0.0.0.0'), drainSeconds: count(0, 3600).default(30) })
      .strict()
      .default({ healthPort: 8080, metricsPort: 9090, host: '0.0.0.0', drainSeconds: 30 }),
    logLevel: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  })
  .strict();

export type AdapterConfig = z.output<typeof adapterConfigSchema>;

function setPath(target: Record<string, unknown>, path: string, value: string): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys.at(-1) as string] = value;
}


/**
 * Validates a raw config object (parsed YAML plus overrides). Store settings are checked by the
 * store's own schema (for gcp with a stand-in project: the real one comes from each cluster).
 * @throws CONFIG_INVALID listing every problem, one per line, with its path.
 */
export function validateAdapterConfig(raw: unknown): AdapterConfig {
  const parsed = adapterConfigSchema.safeParse(raw ?? {});
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  if (parsed.success) {
    const { type, settings } = parsed.data.store;
    const sample = type === 'gcp' ? { projectId: 'sample-project' } : {};
    const store = storeConfigSchema(type).safeParse({ ...sample, ...settings });
    if (!store.success) problems.push(...store.error.issues.map((i) => `store.settings.${i.path.join('.')}: ${i.message}`));
    try {
      new Preconditions(parsed.data.preconditions.rules);
    } catch (err) {
      problems.push(`preconditions.rules: ${(err as Error).message}`);
    }
  }
  if (problems.length > 0 || !parsed.success) {
    throw new PullSecretError('CONFIG_INVALID', ['invalid adapter configuration:', ...problems.map((p) => `  ${p}`)].join('\n'));
  }
  return deepFreeze(parsed.data);
}

/**
 * Loads the config file (YAML), applies environment overrides, validates.
 * @throws CONFIG_INVALID (unreadable file, bad YAML, invalid values).
 */
export async function loadAdapterConfig(path: string | undefined, env: NodeJS.ProcessEnv): Promise<AdapterConfig> {
  let raw: Record<string, unknown> = {};
  if (path !== undefined) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new PullSecretError('CONFIG_INVALID', `cannot read the config file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, { cause: err });
    }
    try {
      raw = (parseYaml(text) as Record<string, unknown> | null) ?? {};
    } catch (err) {
      throw new PullSecretError('CONFIG_INVALID', `the config file ${path} is not valid YAML: ${(err as Error).message.split('\n')[0] ?? ''}`, { cause: err });
    }
  }
  for (const [name, configPath] of Object.entries(ENV_OVERRIDES)) {
    const value = env[name];
    if (value !== undefined && value !== '') setPath(raw, configPath, value);
  }
  return validateAdapterConfig(raw);
}
