import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { brokerConfigSchema } from '../brokers/config.js';
import { PullSecretError } from '../errors/index.js';
import { fieldPathsSchema } from '../reconcile/cluster-params.js';
import {
  defaultPreconditions,
  Preconditions,
  preconditionSchema,
  sharedPreconditions,
  type Precondition,
} from '../reconcile/preconditions.js';
import { DEFAULT_STORE_KIND, storeFactory } from '../stores/registry.js';
import { deepFreeze } from '../util/deep-freeze.js';
import {
  accountServiceProblems,
  accountServiceSectionSchema,
  pullSecretSourceSchema,
} from '../config/account-service.js';
import { adapterEnvLayers } from './config-env.js';
import { adminSectionSchema } from '../config/admin.js';
import { retentionSectionSchema } from '../retention/config.js';
import { entitlementsProblems, entitlementsSectionSchema } from '../entitlements/config.js';
import { issueLines, unreadableFile } from '../config/problems.js';
import { jobModeGrantProblems } from '../config/job-mode-grants.js';
import { adapterConfigMessage } from './config-hints.js';
import { providersSchema, resolveProviders } from './config-providers.js';
import type { ProviderRoute } from '../reconcile/provider-routes.js';
import { managementNamespaceSchema } from '../config/kubernetes-env.js';
import { logLevelSchema, retrySectionSchema } from '../config/sections.js';
import { kubernetesSectionSchema } from '../kube/config-section.js';
import { leaderElectionProblems, leaderElectionSectionSchema } from '../kube/leader-election-config.js';
import { storeSectionSchema } from '../stores/config-section.js';
import { verificationProblems, verificationSectionSchema } from '../config/verification.js';
import { notificationsProblems, notificationsSectionSchema } from '../stores/notifications.js';

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
    /** Provider → store; unset: the `store` section serves every cluster (see `resolveProviders`). */
    providers: providersSchema.optional(),
    kubernetes: kubernetesSectionSchema.prefault({}),
    /** The watch of what the adapter owns (kubernetes.target api only): cache, drift repair, Job reports. */
    informer: z
      .object({
        enabled: z.boolean().default(true),
        namespaces: z.array(managementNamespaceSchema).default([]),
        driftRepair: z.boolean().default(true),
        /** How long a start waits for the first list of the managed Secrets before it takes events. */
        listWaitSeconds: count(0, 600).default(30),
      })
      .strict()
      .prefault({}),
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
        rules: z.array(preconditionSchema).optional(),
        fieldPaths: fieldPathsSchema.prefault({}),
      })
      .strict()
      .prefault({}),
    deletion: z
      .object({ cloudSecret: z.enum(['retain', 'delete']).default('retain') })
      .strict()
      .prefault({}),
    server: z
      .object({
        healthPort: port.default(8080),
        metricsPort: port.default(9090),
        host: z.string().default('0.0.0.0'),
        drainSeconds: count(0, 3600).default(30),
      })
      .strict()
      .prefault({}),
    admin: adminSectionSchema.prefault({}),
    logLevel: logLevelSchema.default('info'),
    accountService: accountServiceSectionSchema.optional(),
    pullSecretSource: pullSecretSourceSchema.default('spec'),
    retention: retentionSectionSchema,
    /** Entitlement certificates (docs/account-service.md). */
    entitlements: entitlementsSectionSchema,
    /** Registry verification of new pull secrets (docs/verification.md). */
    verification: verificationSectionSchema.prefault({}),
    /** PullSecretShares (docs/shares.md): off unless enabled; needs kubernetes.target api. */
    shares: z
      .object({ enabled: z.boolean().default(false), recheckSeconds: count(10, 86_400).default(300) })
      .strict()
      .prefault({}),
    /** Secret Manager event notifications that trigger reconciles (docs/architecture.md, "Store notifications"). */
    notifications: notificationsSectionSchema.prefault({}),
    /** Leader election on a Lease for the once-per-fleet loops (docs/configuration.md). */
    leaderElection: leaderElectionSectionSchema,
  })
  .strict();

type ParsedConfig = z.output<typeof adapterConfigSchema>;

/**
 * The validated adapter configuration; `store.type`, `providers` (provider key → route, `*` for
 * any provider) and `preconditions.rules` (the rules every provider shares) are always resolved.
 */
export type AdapterConfig = Omit<ParsedConfig, 'store' | 'providers' | 'preconditions'> & {
  store: ParsedConfig['store'] & { type: string };
  providers: Readonly<Record<string, ProviderRoute>>;
  preconditions: Omit<ParsedConfig['preconditions'], 'rules'> & { rules: Precondition[] };
};

/** Checks across sections, one line per problem. */
function crossChecks(
  config: ParsedConfig,
  type: string,
  routes: Readonly<Record<string, ProviderRoute>>,
  rules: readonly Precondition[],
): string[] {
  const problems = storeFactory(type)
    .validate(config.store.settings)
    .map((p) => `store.settings.${p}`);
  if (config.execution.mode === 'job' && config.kubernetes.target === 'manifests') {
    problems.push(
      'kubernetes.target: manifests cannot be used with execution.mode job (each Job runs in its own ' +
        'pod, its manifests would be lost); use api or none',
    );
  }
  problems.push(...accountServiceProblems(config));
  problems.push(...verificationProblems(config));
  if (config.shares.enabled && config.kubernetes.target !== 'api')
    problems.push(
      'shares.enabled needs kubernetes.target: api (shares are projected through the Kubernetes API)',
    );
  problems.push(
    ...notificationsProblems(
      config.notifications,
      Object.values(routes).map((route) => route.store),
    ),
  );
  problems.push(...entitlementsProblems(config));
  problems.push(...jobModeGrantProblems(config));
  problems.push(...leaderElectionProblems(config));
  try {
    new Preconditions(rules);
  } catch (err) {
    problems.push(`preconditions.rules: ${(err as Error).message}`);
  }
  for (const [name, route] of Object.entries(routes)) {
    try {
      new Preconditions(route.rules);
    } catch (err) {
      problems.push(`providers.${name}.rules: ${(err as Error).message}`);
    }
  }
  return problems;
}

/**
 * Validates a raw config object (all layers merged). Store settings are checked by the store's own
 * `validate` (everything but the scope, which each cluster gives); an unset `store.type` is the
 * default store.
 * @throws CONFIG_INVALID listing every problem, one per line, with its path.
 */
export function validateAdapterConfig(
  raw: unknown,
  earlier: readonly string[] = [],
  file?: string,
): AdapterConfig {
  const parsed = adapterConfigSchema.safeParse(raw ?? {});
  const problems = [...earlier, ...(parsed.success ? [] : issueLines(parsed.error))];
  if (!parsed.success) throw invalid(problems, file);
  const data = parsed.data;
  const store = { ...data.store, type: data.store.type ?? DEFAULT_STORE_KIND };
  const { routes, problems: routeProblems } = resolveProviders({
    providers: data.providers,
    store,
    projectIdPaths: data.preconditions.fieldPaths.projectId,
    pullSecretPaths: data.preconditions.fieldPaths.pullSecret,
  });
  // The six default rules pick GCP clusters for the one store; with providers, the provider does.
  const rules =
    data.preconditions.rules ??
    (data.providers === undefined ? defaultPreconditions : sharedPreconditions)(data.pullSecretSource);
  problems.push(...routeProblems, ...crossChecks(data, store.type, routes, rules));
  if (problems.length > 0) throw invalid(problems, file);
  return deepFreeze({ ...data, store, providers: routes, preconditions: { ...data.preconditions, rules } });
}

function invalid(problems: readonly string[], file: string | undefined): PullSecretError {
  return new PullSecretError('CONFIG_INVALID', adapterConfigMessage(problems, file));
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
    throw new PullSecretError('CONFIG_INVALID', unreadableFile(what, path, err), { cause: err });
  }
  // Loaded here, not at import: every CLI command (the job's run-job too) imports this module, and
  // only the ones that read a YAML file need the parser (about 40 ms of CPU and 70 files to load).
  const { parseYaml } = await import('../config/yaml-parser.js');
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (err) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `${what} ${path} is not valid YAML: ${(err as Error).message.split('\n')[0] ?? ''}`,
      { cause: err },
    );
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new PullSecretError('CONFIG_INVALID', `${what} ${path} must hold a YAML mapping`);
  return value as Record<string, unknown>;
}

/**
 * Loads the adapter configuration. Precedence, highest first (docs/configuration.md):
 * our environment variables > HyperFleet's (`HYPERFLEET_*`, the hyperfleet-broker `BROKER_*` /
 * `SUBSCRIBER_*`) > the hyperfleet-broker file (`BROKER_CONFIG_FILE`) > the config file > defaults.
 * @throws CONFIG_INVALID (unreadable file, bad YAML, invalid values), every problem at once.
 */
export async function loadAdapterConfig(
  path: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<AdapterConfig> {
  const file = path === undefined ? {} : await readYamlLayer(path, 'the config file');
  const brokerFile = env.BROKER_CONFIG_FILE
    ? await readYamlLayer(env.BROKER_CONFIG_FILE, 'the broker config file (BROKER_CONFIG_FILE)')
    : undefined;
  const { raw, problems } = adapterEnvLayers(file, brokerFile, env);
  return validateAdapterConfig(raw, problems, path);
}
