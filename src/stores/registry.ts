import { PullSecretError } from '../errors/index.js';
import { parseEnv, type EnvParse } from '../config/env.js';
import type { StoreFactory } from './factory.js';
import type { SecretStore } from './store.js';

/**
 * Store kinds by `SECRET_STORE` value. Factories load lazily so the local store never pays for
 * importing a cloud SDK (start-up time of a job matters: one process per cluster reconcile).
 */
const FACTORIES: Readonly<Record<string, () => Promise<StoreFactory<unknown>>>> = {
  local: async () => (await import('./local/index.js')).localStoreFactory,
  gcp: async () => (await import('./gcp-secret-manager/index.js')).gcpStoreFactory,
};

/** The store kinds this build knows. */
export const STORE_KINDS = Object.keys(FACTORIES);

/** The default store: the embedded local encrypted store. */
export const DEFAULT_STORE_KIND = 'local';

/** Loads the factory of `kind`. @throws CONFIG_INVALID naming the known kinds. */
export async function loadStoreFactory(kind: string): Promise<StoreFactory<unknown>> {
  const load = FACTORIES[kind];
  if (load === undefined) {
    throw new PullSecretError('CONFIG_INVALID', `invalid environment variable SECRET_STORE: must be one of ${STORE_KINDS.join(', ')}`);
  }
  return load();
}

/** Reads a store's settings from the environment, collecting problems instead of throwing. */
export function parseStoreEnv(factory: StoreFactory<unknown>, env: NodeJS.ProcessEnv): EnvParse<unknown> {
  return parseEnv(factory.configSchema, factory.env, env);
}

export type { SecretStore };
