import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { brokerConfigSchema } from '../brokers/config.js';
import { PullSecretError } from '../errors/index.js';
import { fieldPathsSchema } from '../adapter/cluster-params.js';
import { DEFAULT_PRECONDITIONS, Preconditions, preconditionSchema } from '../adapter/preconditions.js';
import { DEFAULT_STORE_KIND, storeFactory } from '../stores/registry.js';
import { deepFreeze } from '../util/deep-freeze.js';
import { adapterEnvLayers } from './adapter-env.js';
import { adminSectionSchema } from './admin.js';
import { issueLines } from './problems.js';
import { kubernetesSectionSchema, logLevelSchema, retrySectionSchema, storeSectionSchema } from './sections.js';

/** The image Jobs run unless configured (it holds the `pull-secret` CLI). */
const JOB_IMAGE = 'quay.io/openshift-hyperfleet/pull-secret:latest';

const count = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const port = count(0, 65_535);

/**
 * The adapter's configuration: defaults, the config file, then the HyperFleet conventions and our
 * environment variables (precedence in `loadAdapterConfig`). The store, Kubernetes, retry and log
 * sections are the job's too (`./sections.ts`). Validated once at start; every problem is reported
 * at once; the result is frozen.
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
    store: storeSectionSchema.prefault({}),
    kubernetes: kubernetesSectionSchema.prefault({}),
    execution: z
      .object({
        mode: z.enum(['in-process', 'job']).default('in-process'),
        concurrency: count(1, 1000).default(16),
        retry: retrySectionSchema.prefault({}),
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
          .prefault({}),
      })
      .strict()
      .prefault({}),
    preconditions: z
      .object({
        rules: z.array(preconditionSchema).default([...DEFAULT_PRECONDITIONS]),
        fieldPaths: fieldPathsSchema.prefault({}),
      })
      .strict()
      .prefault({}),
    deletion: z
      .object({ cloudSecret: z.enum(['retain', 'delete']).default('retain') })
      .strict()
      .prefault({}),
    server: z
      .object({ healthPort: port.default(8080), metricsPort: port.default(9090), host: z.string().default('0.0.0.0'), drainSeconds: count(0, 3600).default(30) })
      .strict()
      .prefault({}),
    admin: adminSectionSchema.prefault({}),
    logLevel: logLevelSchema.default('info'),
  })
  .strict();

type ParsedConfig = z.output<typeof adapterConfigSchema>;

/** The validated adapter configuration; `store.type` is always resolved. */
export type AdapterConfig = Omit<ParsedConfig, 'store'> & { store: ParsedConfig['store'] & { type: string } };

/** Checks across sections, one line per problem. */
function crossChecks(config: ParsedConfig, type: string): string[] {
  const problems = storeFactory(type)
    .validate(config.store.settings)
    .map((p) => `store.settings.${p}`);
  if (config.execution.mode === 'job' && config.kubernetes.target === 'manifests') {
    problems.push('kubernetes.target: manifests cannot be used with execution.mode job (each Job runs in its own pod, its manifests would be lost); use api or none');
  }
  try {
    new Preconditions(config.preconditions.rules);
  } catch (err) {
    problems.push(`preconditions.rules: ${(err as Error).message}`);
  }
  return problems;
}

/**
 * Validates a raw config object (all layers merged). Store settings are checked by the store's own
 * `validate` (everything but the scope, which each cluster gives); an unset `store.type` is the
 * default store.
 * @throws CONFIG_INVALID listing every problem, one per line, with its path.
 */
export function validateAdapterConfig(raw: unknown, earlier: readonly string[] = []): AdapterConfig {
  const parsed = adapterConfigSchema.safeParse(raw ?? {});
  const problems = [...earlier, ...(parsed.success ? [] : issueLines(parsed.error))];
  if (parsed.success) problems.push(...crossChecks(parsed.data, parsed.data.store.type ?? DEFAULT_STORE_KIND));
  if (problems.length > 0 || !parsed.success) {
    throw new PullSecretError('CONFIG_INVALID', ['invalid adapter configuration:', ...problems.map((p) => `  ${p}`)].join('\n'));
  }
  const config = { ...parsed.data, store: { ...parsed.data.store, type: parsed.data.store.type ?? DEFAULT_STORE_KIND } };
  return deepFreeze(config);
}

/**
 * Reads a YAML file into a layer.
 * @throws CONFIG_INVALID (unreadable file, bad YAML, not a mapping).
 */
export async function readYamlLayer(path: string, what: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new PullSecretError('CONFIG_INVALID', `cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, { cause: err });
  }
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (err) {
    throw new PullSecretError('CONFIG_INVALID', `${what} ${path} is not valid YAML: ${(err as Error).message.split('\n')[0] ?? ''}`, { cause: err });
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new PullSecretError('CONFIG_INVALID', `${what} ${path} must hold a YAML mapping`);
  return value as Record<string, unknown>;
}

/**
 * Loads the adapter configuration. Precedence, highest first (docs/configuration.md):
 * our environment variables > HyperFleet's (`HYPERFLEET_*`, the hyperfleet-broker `BROKER_*` /
 * `SUBSCRIBER_*`) > the hyperfleet-broker file (`BROKER_CONFIG_FILE`) > the config file > defaults.
 * @throws CONFIG_INVALID (unreadable file, bad YAML, invalid values), every problem at once.
 */
export async function loadAdapterConfig(path: string | undefined, env: NodeJS.ProcessEnv): Promise<AdapterConfig> {
  const file = path === undefined ? {} : await readYamlLayer(path, 'the config file');
  const brokerFile = env.BROKER_CONFIG_FILE ? await readYamlLayer(env.BROKER_CONFIG_FILE, 'the broker config file (BROKER_CONFIG_FILE)') : undefined;
  const { raw, problems } = adapterEnvLayers(file, brokerFile, env);
  return validateAdapterConfig(raw, problems);
}
