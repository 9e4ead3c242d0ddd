import { DEFAULT_RETRY } from '../util/retry.js';
import { KUBERNETES_TARGET_ENV } from './kubernetes-env.js';
import type { EnvMapping } from './env.js';
import { valueAt } from './paths.js';

/** Who reads a variable: the job, the adapter, or both (then it means the same to both). */
type EnvScope = 'job' | 'adapter' | 'both';

/** One of our environment variables: the config path it sets and who reads it. */
interface ConfigEnvVar {
  /** Dotted path in the adapter's config shape (`store.settings.endpoint`); job-only ones under `job.`. */
  path: string;
  help: string;
  scope: EnvScope;
  /** False for a shared setting the adapter must not hand its Jobs (a path in the adapter's own pod). */
  toJob?: boolean;
}

/** Path prefix of a store setting in the adapter's config shape. */
const STORE_SETTINGS = 'store.settings.';

/**
 * What the table needs to know of the stores (their descriptors, src/stores/registry.ts, which hands
 * them in: see src/stores/config-env.ts): their kinds, the default, and each one's variables.
 */
interface StoreEnvCatalog {
  kinds: readonly string[];
  defaultKind: string;
  stores: () => ReadonlyArray<{
    kind: string;
    selectedBy: readonly string[];
    env: Readonly<Record<string, { key: string; help: string; secret?: boolean }>>;
    scope?: { settingKeys: readonly string[] };
  }>;
}

/** Our variables but the stores' own settings, in the order `--help` lists them. */
const own = (catalog: StoreEnvCatalog): Readonly<Record<string, ConfigEnvVar>> => ({
  HYPERFLEET_API_URL: { path: 'hyperfleetApi.baseUrl', scope: 'adapter', help: 'URL of the HyperFleet API.' },
  HYPERFLEET_API_TOKEN_FILE: {
    path: 'hyperfleetApi.tokenFile',
    scope: 'adapter',
    help: 'File holding the API bearer token.',
  },
  HYPERFLEET_API_CA_FILE: {
    path: 'hyperfleetApi.caFile',
    scope: 'adapter',
    help: 'PEM CA file of an https API.',
  },
  BROKER_TYPE: {
    path: 'broker.type',
    scope: 'adapter',
    help: 'embedded | rabbitmq | pubsub (googlepubsub, the HyperFleet spelling, means pubsub).',
  },
  BROKER_URL: {
    path: 'broker.url',
    scope: 'adapter',
    help: 'RabbitMQ URL (may hold a password; never logged).',
  },
  BROKER_PROJECT_ID: { path: 'broker.projectId', scope: 'adapter', help: 'Pub/Sub project.' },
  BROKER_TOPIC: { path: 'broker.topic', scope: 'adapter', help: 'Topic the Sentinel publishes to.' },
  BROKER_SUBSCRIPTION_ID: {
    path: 'broker.subscriptionId',
    scope: 'adapter',
    help: 'Subscription id shared by the replicas.',
  },
  BROKER_EXCHANGE_TYPE: {
    path: 'broker.exchangeType',
    scope: 'adapter',
    help: 'RabbitMQ: type of an exchange the adapter declares: topic (default) | fanout.',
  },
  BROKER_QUEUE: {
    path: 'broker.queue',
    scope: 'adapter',
    help: 'RabbitMQ: queue name prefix, {queue}-{subscriptionId} (default: the topic), as HyperFleet.',
  },
  BROKER_ROUTING_KEY: {
    path: 'broker.routingKey',
    scope: 'adapter',
    help: "RabbitMQ: routing key of the adapter's own publishes (not the binding key).",
  },
  BROKER_BINDING_KEY: {
    path: 'broker.bindingKey',
    scope: 'adapter',
    help: 'RabbitMQ binding key of the queue (default "", as upstream; "#" takes any routing key).',
  },
  BROKER_QUEUE_TYPE: {
    path: 'broker.queueType',
    scope: 'adapter',
    help: 'RabbitMQ: type of a queue the adapter declares: unset (no arguments, as HyperFleet) | quorum | classic.',
  },
  BROKER_MAX_DELIVERIES: {
    path: 'broker.maxDeliveries',
    scope: 'adapter',
    help: 'RabbitMQ and embedded: deliveries of one message before it is dead-lettered (default 10).',
  },
  EXECUTION_MODE: { path: 'execution.mode', scope: 'adapter', help: 'in-process | job.' },
  CONCURRENCY: {
    path: 'execution.concurrency',
    scope: 'adapter',
    help: 'Clusters worked on at once per replica.',
  },
  HEALTH_PORT: { path: 'server.healthPort', scope: 'adapter', help: 'Port of /healthz and /readyz.' },
  METRICS_PORT: { path: 'server.metricsPort', scope: 'adapter', help: 'Port of /metrics.' },
  ADMIN_ENABLED: {
    path: 'admin.enabled',
    scope: 'adapter',
    help: 'Serve the admin API (default false; docs/admin-api.md).',
  },
  ADMIN_HOST: {
    path: 'admin.host',
    scope: 'adapter',
    help: 'Address of the admin API (default 127.0.0.1; another needs TLS).',
  },
  ADMIN_PORT: { path: 'admin.port', scope: 'adapter', help: 'Port of the admin API (default 8443).' },
  ADMIN_TLS_CERT_FILE: {
    path: 'admin.tls.certFile',
    scope: 'adapter',
    help: 'PEM certificate of the admin API (reloaded on change).',
  },
  ADMIN_TLS_KEY_FILE: {
    path: 'admin.tls.keyFile',
    scope: 'adapter',
    help: 'PEM key of the admin API (reloaded on change).',
  },
  ADMIN_TOKEN_FILE: {
    path: 'admin.tokens.file',
    scope: 'adapter',
    help: 'Admin token file (dev stack, tests), created and rotated by the adapter.',
  },
  ADMIN_TOKEN_SECRET_NAMESPACE: {
    path: 'admin.tokens.secret.namespace',
    scope: 'adapter',
    help: 'Namespace of the admin token Secret.',
  },
  ADMIN_TOKEN_SECRET_NAME: {
    path: 'admin.tokens.secret.name',
    scope: 'adapter',
    help: 'Name of the admin token Secret (created and rotated by the adapter).',
  },
  ADMIN_TOKEN_LIFETIME_SECONDS: {
    path: 'admin.tokens.lifetimeSeconds',
    scope: 'adapter',
    help: 'Admin token lifetime (default 86400; rotation at half of it).',
  },
  METRICS_REQUIRE_TOKEN: {
    path: 'admin.protectMetrics',
    scope: 'adapter',
    help: '/metrics requires the admin token as a bearer token (default false).',
  },
  CLUSTER_ID: {
    path: 'job.clusterId',
    scope: 'job',
    help: 'Cluster id (required); lowercase, used in labels and names.',
  },
  PULL_SECRET_DATA: {
    path: 'job.pullSecretData',
    scope: 'job',
    help: 'Pull secret JSON, {"auths":{...}} (required).',
  },
  SECRET_NAME: {
    path: 'job.secretName',
    scope: 'job',
    help: 'Cloud secret id (default hyperfleet-{CLUSTER_ID}-pull-secret).',
  },
  RESULTS_PATH: {
    path: 'job.resultsPath',
    scope: 'job',
    help: 'Write a JSON result file here for a status reporter (optional).',
  },
  TRANSFER_RECORDS: {
    path: 'job.transferRecords',
    scope: 'job',
    help:
      'true: merge the applied ownership transfer record beside the secret into the pull secret (set ' +
      'by the adapter with accountService).',
  },
  SECRET_STORE: {
    path: 'store.type',
    scope: 'both',
    help: `Secret store: ${catalog.kinds.join(' | ')}. Unset: the store whose settings are set (${catalog
      .stores()
      .filter((s) => s.selectedBy.length > 0)
      .map((s) => `${s.selectedBy.join(', ')}: ${s.kind}`)
      .join('; ')}), else ${catalog.defaultKind}.`,
  },
  KUBERNETES_TARGET: {
    path: 'kubernetes.target',
    scope: 'both',
    help: KUBERNETES_TARGET_ENV.KUBERNETES_TARGET.help,
  },
  MANAGEMENT_NAMESPACE: {
    path: 'kubernetes.namespace',
    scope: 'job',
    help: KUBERNETES_TARGET_ENV.MANAGEMENT_NAMESPACE.help,
  },
  MANIFEST_DIR: {
    path: 'kubernetes.manifestDir',
    scope: 'both',
    toJob: false,
    help: KUBERNETES_TARGET_ENV.MANIFEST_DIR.help,
  },
  KUBECONFIG_PATH: {
    path: 'kubernetes.kubeconfig',
    scope: 'both',
    toJob: false,
    help: 'Explicit kubeconfig of the api target (default KUBECONFIG, then the in-cluster service account).',
  },
  RETRY_MAX_ATTEMPTS: {
    path: 'execution.retry.maxAttempts',
    scope: 'both',
    help: `Attempts per step on transient errors (default ${DEFAULT_RETRY.maxAttempts}).`,
  },
  RETRY_BASE_DELAY_MS: {
    path: 'execution.retry.baseDelayMs',
    scope: 'both',
    help: `First retry delay in ms, doubled each retry (default ${DEFAULT_RETRY.baseDelayMs}).`,
  },
  RETRY_MAX_DELAY_MS: {
    path: 'execution.retry.maxDelayMs',
    scope: 'both',
    help: `Largest retry delay in ms (default ${DEFAULT_RETRY.maxDelayMs}).`,
  },
  LOG_LEVEL: { path: 'logLevel', scope: 'both', help: 'debug | info | warn | error (default info).' },
  VERIFICATION_MODE: {
    path: 'verification.mode',
    scope: 'job',
    help: 'Registry verification before a write: off | warn | enforce (default off; docs/verification.md).',
  },
  VERIFICATION_REGISTRIES: {
    path: 'verification.registries',
    scope: 'job',
    help:
      'Registries checked, comma-separated auths keys or host[:port]; * = every one. Required unless ' +
      'VERIFICATION_MODE is off.',
  },
  VERIFICATION_CA_PEM: {
    path: 'verification.caPem',
    scope: 'job',
    help: 'PEM CA certificates trusted for the registries (the adapter sets it from verification.caFile).',
  },
  VERIFICATION_CA_FILE: {
    path: 'verification.caFile',
    scope: 'job',
    help: 'PEM CA file trusted for the registries, a path in the job pod (alternative to VERIFICATION_CA_PEM).',
  },
  VERIFICATION_TIMEOUT_MS: {
    path: 'verification.timeoutMs',
    scope: 'job',
    help: 'Time limit of one registry request in ms (default 10000).',
  },
  VERIFICATION_PER_REGISTRY_PER_MINUTE: {
    path: 'verification.perRegistryPerMinute',
    scope: 'job',
    help: 'Login checks per registry host and minute (default 60).',
  },
  RETENTION_ENABLED: {
    path: 'retention.enabled',
    scope: 'job',
    help: 'true: one retention pass after the push (docs/retention.md; default false).',
  },
  RETENTION_GRACE_HOURS: {
    path: 'retention.graceHours',
    scope: 'job',
    help: 'Hours a superseded version stays enabled (default 24).',
  },
  RETENTION_DAYS: {
    path: 'retention.retentionDays',
    scope: 'job',
    help: 'Days after it was superseded when a version is destroyed (default 30).',
  },
  TERMINATION_MESSAGE_PATH: {
    path: 'job.terminationMessagePath',
    scope: 'job',
    help: "Write the job's short report here for the adapter (Job mode sets the container's terminationMessagePath).",
  },
  RETENTION_KEEP_VERSIONS: {
    path: 'retention.keepVersions',
    scope: 'job',
    help: 'At most this many versions not destroyed (default 5).',
  },
});

/**
 * The table of our environment variables over the stores of `catalog`: what every reader asks
 * (src/stores/config-env.ts binds it to the store registry).
 */
export function envTable(catalog: StoreEnvCatalog) {
  /**
   * Every environment variable of ours: the fixed ones above and each store's settings
   * (`store.settings.<key>`, tagged with the store). A store's scope setting (GCP_PROJECT_ID) is
   * job-only: the adapter takes the scope from each cluster.
   */
  function configEnv(): Readonly<Record<string, ConfigEnvVar & { store?: string }>> {
    const table: Record<string, ConfigEnvVar & { store?: string }> = { ...own(catalog) };
    for (const store of catalog.stores()) {
      for (const [name, { key, help, secret }] of Object.entries(store.env)) {
        const scope = store.scope?.settingKeys.includes(key) === true ? 'job' : 'both';
        table[name] = {
          path: `${STORE_SETTINGS}${key}`,
          help,
          scope,
          store: store.kind,
          ...(secret === true ? { toJob: false } : {}),
        };
      }
    }
    return table;
  }

  /** The variables one reader (`job` or `adapter`) reads, name → entry. */
  function envFor(reader: 'job' | 'adapter'): Record<string, ConfigEnvVar & { store?: string }> {
    return Object.fromEntries(
      Object.entries(configEnv()).filter(([, v]) => v.scope === 'both' || v.scope === reader),
    );
  }

  /**
   * The variables whose path lies under `prefix`, as a flat mapping for `parseEnv` (key = the rest
   * of the path), e.g. `sectionEnv('job', 'execution.retry')` → `RETRY_MAX_ATTEMPTS: maxAttempts`.
   */
  function sectionEnv(reader: 'job' | 'adapter', prefix: string): EnvMapping {
    const mapping: Record<string, { key: string; help: string }> = {};
    for (const [name, v] of Object.entries(envFor(reader))) {
      if (v.path.startsWith(`${prefix}.`))
        mapping[name] = { key: v.path.slice(prefix.length + 1), help: v.help };
    }
    return mapping;
  }

  /**
   * The job environment the adapter's configuration projects onto a Job (Job mode): every shared
   * variable (`KUBERNETES_TARGET`, `RETRY_*`, `LOG_LEVEL`) read from the adapter config at its path,
   * `SECRET_STORE` naming the cluster's store, and that store's settings: the cluster's own
   * (`cluster`: GCP_PROJECT_ID, GCP_KMS_KEY_NAME) over the provider's shared ones (`store.settings`).
   * Only plain values are projected; a secret setting (LOCAL_STORE_KEY) never is.
   */
  function projectJobEnv(
    config: unknown,
    store: { kind: string; settings: Readonly<Record<string, unknown>> },
    cluster: Readonly<Record<string, string>> = {},
  ): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [name, v] of Object.entries(configEnv())) {
      if (v.toJob === false || (v.store !== undefined && v.store !== store.kind)) continue;
      if (v.scope !== 'both' && !(v.store !== undefined && v.scope === 'job')) continue;
      const key = v.path.slice(STORE_SETTINGS.length);
      let value: unknown;
      if (name === 'SECRET_STORE') value = store.kind;
      else if (v.store === undefined) value = valueAt(config, v.path);
      // A scope setting (job-only) comes from the cluster alone; any other, the cluster's over the shared one.
      else value = cluster[key] ?? (v.scope === 'job' ? undefined : store.settings[key]);
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        env[name] = String(value);
      // A list of names (GCP_SECRET_TOPICS) travels comma-separated, as its variable takes it.
      else if (Array.isArray(value) && value.every((item) => typeof item === 'string'))
        env[name] = value.join(',');
    }
    return env;
  }
  return { configEnv, envFor, sectionEnv, projectJobEnv };
}
