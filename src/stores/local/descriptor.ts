import { schemaProblems } from '../../config/problems.js';
import type { StoreFactory } from '../factory.js';
import { STORE_METHODS } from '../instrumented-store.js';
import { localStoreConfigSchema, localStoreEnv, type LocalStoreConfig } from './config.js';

/** The local store mirrors Secret Manager's per-version limit, so dev runs refuse what GCP would. */
const LOCAL_PAYLOAD_LIMIT_BYTES = 65_536;

/**
 * The embedded default store (`SECRET_STORE=local`): an encrypted directory that behaves like GCP
 * Secret Manager. No scope, no quotas, no preflight (there is nothing to set up before the first
 * cluster). `create` touches nothing on disk; the directory and key file are set up on the first
 * call. Configuration: LOCAL_STORE_DIR, LOCAL_STORE_KEY, LOCAL_STORE_KEY_FILE.
 */
export const localStoreFactory: StoreFactory<LocalStoreConfig> = {
  kind: 'local',
  title: 'local encrypted store',
  configSchema: localStoreConfigSchema,
  env: localStoreEnv,
  selectedBy: [],
  maxPayloadBytes: LOCAL_PAYLOAD_LIMIT_BYTES,
  quotas: {},
  apiCalls: { methods: STORE_METHODS, codes: ['OK'] },
  validate: (settings) => schemaProblems(localStoreConfigSchema, settings),
  async create(config, hooks) {
    const [{ LocalStore }, { instrumented }] = await Promise.all([
      import('./local-store.js'),
      import('../instrumented-store.js'),
    ]);
    const store = new LocalStore({ dir: config.dir, key: config.key?.bytes(), keyFile: config.keyFile });
    return hooks?.onApiCall === undefined ? store : instrumented(store, hooks.onApiCall);
  },
};
