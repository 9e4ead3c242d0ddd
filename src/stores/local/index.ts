export { localStoreFactory } from './descriptor.js';
export {
  DEFAULT_LOCAL_STORE_DIR,
  localStoreConfigSchema,
  localStoreEnv,
  type LocalStoreConfig,
} from './config.js';
export { StoreKey } from './key.js';
export { LOCAL_MAX_PAYLOAD_BYTES, LocalStore, type LocalStoreOptions } from './local-store.js';
