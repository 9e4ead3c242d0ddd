import type { z } from 'zod';
import type { SecretStore } from './store.js';

import type { EnvSetting } from '../config/env.js';

export type { EnvSetting };

/**
 * Observes every call a store makes to its backend once it finished: the backend's own method name
 * (`AccessSecretVersion`), its status code name (`OK`, `NOT_FOUND`, `CANCELLED` when the caller
 * aborted) and its duration. Feeds `pullsecret_store_api_calls_total`; must not throw.
 */
export type ApiCallHook = (method: string, code: string, durationMs: number) => void;

/** What the caller hands a store when it builds one: observers, never settings. */
export interface StoreHooks {
  onApiCall?: ApiCallHook;
}

/** Values of a scope's setting keys, e.g. { projectId: 'p' } or { accountId: '123456789012', region: 'us-east-1' }. */
export type ScopeValues = Readonly<Record<string, string>>;

/**
 * The quota scope of a store: the unit its provider meters calls by, and the settings the adapter
 * fills from each cluster (GCP: the project; AWS: account and region; Azure: the vault).
 * A store without a scope (the local store) has one client and no quotas to protect.
 */
interface StoreScope {
  /** Keys of the store config that together name one quota scope, in order (GCP ['projectId']). */
  readonly settingKeys: readonly string[];
  /** What a scope is called in messages (`GCP project`). */
  readonly noun: string;
  /** Where the secrets of one scope live (`projects/p`). */
  location(scope: ScopeValues): string;
  /** Extra fields of the status `data` (GCP keeps the seed's `gcpProject`). */
  statusData?(scope: ScopeValues): Record<string, string>;
  /** Extra fields of every job log line (GCP keeps the upstream job's `gcp_project`). */
  logFields?(scope: ScopeValues): Record<string, string>;
}

/** Calls per minute the backend allows per scope; a missing figure means "not metered". */
export interface StoreQuotas {
  /** Mutating calls (create, add version, delete). */
  readonly writesPerMinute?: number;
  /** Metadata reads (get, list versions); payload reads are not counted here. */
  readonly readsPerMinute?: number;
  /** Payload reads (GCP: AccessSecretVersion), where the backend meters them apart. */
  readonly accessesPerMinute?: number;
}

/** Preflight of a store: options the CLI offers and a runner loaded on first use. */
interface StorePreflight {
  /** One line for `preflight --help`. */
  readonly summary: string;
  /** Extra `--help` text (what is checked, exit codes). */
  readonly help: string;
  /** The command-line options the checks take (commander flag syntax); none is required by commander. */
  readonly options: ReadonlyArray<{ flags: string; description: string; defaultValue?: string | boolean }>;
  /** Loads the checks (SDK-heavy code) on first use. */
  load(): Promise<PreflightRunner>;
}

/** What one preflight run produced: the printed report and whether every check passed. */
export interface PreflightOutcome {
  output: string;
  ok: boolean;
  failedChecks: number;
}

/**
 * Runs a store's preflight checks with the parsed CLI options.
 * @throws PullSecretError CONFIG_INVALID for a bad option (exit 2); ABORTED when `signal` aborts.
 */
export type PreflightRunner = (
  options: Readonly<Record<string, unknown>>,
  context: { env: NodeJS.ProcessEnv; signal: AbortSignal },
) => Promise<PreflightOutcome>;

/** Label values of a store's API-call metrics, created up front so dashboards see zeros. */
interface StoreApiCalls {
  /** Method names the store reports (`GetSecret`, ...). */
  readonly methods: readonly string[];
  /** Status code names worth a pre-created series (`OK`, `NOT_FOUND`, ...). */
  readonly codes: readonly string[];
  /** A store-specific counter kept for existing dashboards (GCP: the seed's `pullsecret_gcp_api_calls_total`). */
  readonly ownCounter?: StoreOwnCounter;
}

/** A counter of API calls by one label that a store's dashboards already use. */
interface StoreOwnCounter {
  readonly name: string;
  readonly help: string;
  readonly label: string;
  /** Label values created up front. */
  readonly values: readonly string[];
  /** The label value of a call with status `code`. */
  valueOf(code: string): string;
}

/** Labels and annotations a store's Job pods must carry. */
interface JobPodMetadata {
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/**
 * Everything about one store, declared in its own folder (`src/stores/<name>/descriptor.ts`) and
 * listed once in `registry.ts`. A descriptor module imports no SDK: `create` loads the store's code
 * on first use, so a job on the local store never pays for a cloud SDK.
 */
export interface StoreFactory<Config = unknown> {
  /** Value of `SECRET_STORE` / `store.type` that selects this store. */
  readonly kind: string;
  /** Name for messages (`GCP Secret Manager`). */
  readonly title: string;
  /** Zod schema of the store's config; required keys are reported as missing env variables. */
  readonly configSchema: z.ZodType<Config>;
  /** Environment variable name → config key; the same variables configure the job and the adapter. */
  readonly env: Readonly<Record<string, EnvSetting>>;
  /**
   * Variables that choose this store when `SECRET_STORE` is unset (its cloud parameters), and
   * contradict any other `SECRET_STORE`. Empty for the default store.
   */
  readonly selectedBy: readonly string[];
  /** Largest payload of one version, in bytes, checked before any call. */
  readonly maxPayloadBytes: number;
  /** Quota scope; undefined when the store has none. */
  readonly scope?: StoreScope;
  /** The backend's per-scope rate limits. */
  readonly quotas: StoreQuotas;
  /** Preflight checks of a customer's setup; undefined when the store has none. */
  readonly preflight?: StorePreflight;
  /** Label values of `pullsecret_store_api_calls_total` for this store. */
  readonly apiCalls: StoreApiCalls;
  /**
   * What the pods of a Job on this store need beyond the Job's own metadata (Azure: the workload
   * identity label the AKS webhook acts on). Undefined when nothing is needed.
   */
  readonly jobPod?: JobPodMetadata;
  /**
   * Checks the adapter's `store.settings` (everything but the scope, which each cluster gives) and
   * returns one line per problem (`key: rule`), never echoing a value.
   */
  validate(settings: Readonly<Record<string, unknown>>): string[];
  /**
   * Builds a client (loading the store's code on first use). Must not make network calls, so
   * `--help` and dry validation stay offline.
   * @throws PullSecretError CONFIG_INVALID when the config breaks a rule.
   */
  create(config: Config, hooks?: StoreHooks): Promise<SecretStore>;
  /**
   * Loads the code `create` loads (the SDK), without calling anything, so a long-running process
   * can pay for it at start instead of on its first event; a store may also build a client it
   * never uses, to fill the SDK's caches (GCP: its service definitions). Undefined when `create`
   * loads nothing heavy.
   */
  preload?(): Promise<void>;
}
