import type { StoreFactory } from '../factory.js';
import type { SecretStore } from '../store.js';
import { localStoreConfigSchema, localStoreEnv, type LocalStoreConfig } from './config.js';
import { LocalStore } from './local-store.js';

export { DEFAULT_LOCAL_STORE_DIR, localStoreConfigSchema, localStoreEnv, type LocalStoreConfig } from './config.js';
export { StoreKey } from './key.js';
export { LOCAL_MAX_PAYLOAD_BYTES, LocalStore, type LocalStoreOptions } from './local-store.js';

/**
 * The embedded default store (`SECRET_STORE=local`): an encrypted directory that behaves like GCP
 * Secret Manager. `create` touches nothing on disk; the directory and key file are set up on the
 * first call. Configuration: LOCAL_STORE_DIR, LOCAL_STORE_KEY, LOCAL_STORE_KEY_FILE.
 */
export const localStoreFactory: StoreFactory<LocalStoreConfig> = {
  kind: 'local',
  configSchema: localStoreConfigSchema,
  env: localStoreEnv,
  create(config: LocalStoreConfig): Promise<SecretStore> {
    return Promise.resolve(new LocalStore({ dir: config.dir, key: config.key?.bytes(), keyFile: config.keyFile }));
  },
};
