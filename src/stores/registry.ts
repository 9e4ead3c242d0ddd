import type { z } from 'zod';
import { PullSecretError } from '../errors/index.js';
import { parseEnv, type EnvMapping, type EnvParse } from '../config/env.js';
import { gcpStoreConfigSchema, gcpStoreEnv } from './gcp-secret-manager/config.js';
import { localStoreConfigSchema, localStoreEnv } from './local/config.js';
import type { StoreFactory } from './factory.js';
import type { SecretStore } from './store.js';

/** A store kind's settings (light: no SDK) and a loader for its factory. */
interface StoreEntry {
  configSchema: z.ZodType<unknown>;
  env: EnvMapping;
  /** Loaded on first use, so a job on the local store never pays for importing a cloud SDK. */
  load: () => Promise<StoreFactory<unknown>>;
}

const STORES: Readonly<Record<string, StoreEntry>> = {
  local: {
    configSchema: localStoreConfigSchema,
    env: localStoreEnv,
    load: async () => (await import('./local/index.js')).localStoreFactory,
  },
  gcp: {
    configSchema: gcpStoreConfigSchema,
    env: gcpStoreEnv,
    load: async () => (await import('./gcp-secret-manager/index.js')).gcpStoreFactory,
  },
};

/** The store kinds this build knows. */
export const STORE_KINDS = Object.keys(STORES);

/** The default store: the embedded local encrypted store. */
export const DEFAULT_STORE_KIND = 'local';

function entry(kind: string): StoreEntry {
  const found = STORES[kind];
  if (found === undefined) {
    throw new PullSecretError('CONFIG_INVALID', `invalid environment variable SECRET_STORE: must be one of ${STORE_KINDS.join(', ')}`);
  }
  return found;
}

/** True when `kind` names a known store. */
export function isStoreKind(kind: string): boolean {
  return kind in STORES;
}

/** The schema of a store's settings. @throws CONFIG_INVALID for an unknown kind. */
export function storeConfigSchema(kind: string): z.ZodType<unknown> {
  return entry(kind).configSchema;
}

/** The environment variables a store reads. @throws CONFIG_INVALID for an unknown kind. */
export function storeEnv(kind: string): EnvMapping {
  return entry(kind).env;
}

/**
 * Reads a store's settings from the environment, collecting problems instead of throwing.
 * @throws CONFIG_INVALID for an unknown kind.
 */
export function parseStoreEnv(kind: string, env: NodeJS.ProcessEnv): EnvParse<unknown> {
  const { configSchema, env: mapping } = entry(kind);
  return parseEnv(configSchema, mapping, env);
}

/**
 * Builds a store client from parsed settings (no network call).
 * @throws CONFIG_INVALID for an unknown kind or settings the factory refuses.
 */
export async function createStore(kind: string, config: unknown): Promise<SecretStore> {
  const factory = await entry(kind).load();
  return factory.create(config);
}
