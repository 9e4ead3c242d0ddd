import type { z } from 'zod';
import { PullSecretError } from '../errors/index.js';
import { parseEnv, type EnvMapping, type EnvParse } from '../config/env.js';
import { awsStoreFactory } from './aws-secrets-manager/descriptor.js';
import { azureStoreFactory } from './azure-key-vault/descriptor.js';
import { gcpStoreFactory } from './gcp-secret-manager/descriptor.js';
import { localStoreFactory } from './local/descriptor.js';
import type { ScopeValues, StoreFactory, StoreHooks } from './factory.js';
import type { SecretStore } from './store.js';

/**
 * Every store this build knows, one line each; the first is the default. A descriptor declares all
 * there is to know about its store (see `StoreFactory`) and loads its SDK only on first use.
 */
const STORES: ReadonlyArray<StoreFactory<unknown>> = [
  localStoreFactory,
  gcpStoreFactory,
  awsStoreFactory,
  azureStoreFactory,
];

const BY_KIND: ReadonlyMap<string, StoreFactory<unknown>> = new Map(STORES.map((s) => [s.kind, s]));

/** The store kinds this build knows. */
export const STORE_KINDS: readonly string[] = STORES.map((s) => s.kind);

/** The default store: the embedded local encrypted store. */
export const DEFAULT_STORE_KIND: string = (STORES[0] as StoreFactory<unknown>).kind;

/** Every store's descriptor, in registry order. */
export function storeFactories(): ReadonlyArray<StoreFactory<unknown>> {
  return [...BY_KIND.values()];
}

/** The descriptor of `kind`. @throws CONFIG_INVALID for an unknown kind. */
export function storeFactory(kind: string): StoreFactory<unknown> {
  const found = BY_KIND.get(kind);
  if (found === undefined) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `invalid environment variable SECRET_STORE: must be one of ${STORE_KINDS.join(', ')}`,
    );
  }
  return found;
}

/** True when `kind` names a known store. */
export function isStoreKind(kind: string): boolean {
  return BY_KIND.has(kind);
}

/** The schema of a store's settings. @throws CONFIG_INVALID for an unknown kind. */
export function storeConfigSchema(kind: string): z.ZodType<unknown> {
  return storeFactory(kind).configSchema;
}

/** The environment variables a store reads. @throws CONFIG_INVALID for an unknown kind. */
export function storeEnv(kind: string): EnvMapping {
  return storeFactory(kind).env;
}

/**
 * The store a process uses, from `SECRET_STORE` and the stores' cloud parameters (`selectedBy`):
 * `SECRET_STORE` when set; otherwise the one store whose parameters are set (the upstream job sets
 * `GCP_PROJECT_ID` and no `SECRET_STORE`: that is GCP); otherwise the default store.
 *
 * @throws CONFIG_INVALID for an unknown `SECRET_STORE`, a `SECRET_STORE` contradicted by another
 *   store's parameter (e.g. `local` with `GCP_PROJECT_ID`), or parameters of two stores.
 */
export function selectStoreKind(env: NodeJS.ProcessEnv, chosen = env.SECRET_STORE): string {
  const isSet = (name: string) => (env[name] ?? '') !== '';
  const selecting = storeFactories().flatMap((s) =>
    s.selectedBy.filter(isSet).map((name) => ({ kind: s.kind, name })),
  );
  if (chosen !== undefined && chosen !== '') {
    const store = storeFactory(chosen);
    const contradiction = selecting.find((s) => s.kind !== store.kind);
    if (contradiction !== undefined) {
      throw new PullSecretError(
        'CONFIG_INVALID',
        `invalid environment variable SECRET_STORE: ${store.kind} contradicts ${contradiction.name}, ` +
          `which only the ${contradiction.kind} store reads; unset one of them`,
      );
    }
    return store.kind;
  }
  const kinds = [...new Set(selecting.map((s) => s.kind))];
  if (kinds.length > 1) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `SECRET_STORE is not set and ${selecting.map((s) => s.name).join(', ')} belong to different stores ` +
        `(${kinds.join(', ')}); set SECRET_STORE`,
    );
  }
  return kinds[0] ?? DEFAULT_STORE_KIND;
}

/**
 * Reads a store's settings from the environment, collecting problems instead of throwing.
 * @throws CONFIG_INVALID for an unknown kind.
 */
export function parseStoreEnv(kind: string, env: NodeJS.ProcessEnv): EnvParse<unknown> {
  const { configSchema, env: mapping } = storeFactory(kind);
  return parseEnv(configSchema, mapping, env);
}

/**
 * The scope values of a store config (GCP: `{ projectId }`): every one of the store's scope
 * setting keys with a non-empty string; undefined when the store has no scope or one is missing.
 */
export function scopeOf(kind: string, config: unknown): ScopeValues | undefined {
  const scope = BY_KIND.get(kind)?.scope;
  if (scope === undefined) return undefined;
  const values: Record<string, string> = {};
  for (const key of scope.settingKeys) {
    const value = (config as Record<string, unknown> | undefined)?.[key];
    if (typeof value !== 'string' || value === '') return undefined;
    values[key] = value;
  }
  return values;
}

/**
 * Where a store keeps the secrets of `scope`, for status `data`: `location` plus the fields the
 * store declares (GCP: the seed's `gcpProject`). Empty without complete scope values.
 */
export function scopeStatusData(kind: string, scope: ScopeValues | undefined): Record<string, string> {
  const declared = BY_KIND.get(kind)?.scope;
  const values = scopeOf(kind, scope);
  if (declared === undefined || values === undefined) return {};
  return { location: declared.location(values), ...declared.statusData?.(values) };
}

/** Fields a store adds to every job log line for `scope` (GCP: `gcp_project`). */
export function scopeLogFields(kind: string, scope: ScopeValues | undefined): Record<string, string> {
  const declared = BY_KIND.get(kind)?.scope;
  const values = scopeOf(kind, scope);
  if (declared === undefined || values === undefined) return {};
  return declared.logFields?.(values) ?? {};
}

/**
 * Builds a store client from parsed settings (no network call).
 * @throws CONFIG_INVALID for an unknown kind or settings the factory refuses.
 */
export async function createStore(kind: string, config: unknown, hooks?: StoreHooks): Promise<SecretStore> {
  return storeFactory(kind).create(config, hooks);
}
