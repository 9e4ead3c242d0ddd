import type { z } from 'zod';
import type { SecretStore } from './store.js';

import type { EnvSetting } from '../config/env.js';

export type { EnvSetting };

/**
 * A store factory owns its config schema (design §3). The registry builds the config from the
 * environment (or, later, from the adapter's YAML) and calls `create`.
 */
export interface StoreFactory<Config = unknown> {
  /** Value of `SECRET_STORE` that selects this store. */
  readonly kind: string;
  /** Zod schema of the store's config; required keys are reported as missing env variables. */
  readonly configSchema: z.ZodType<Config>;
  /** Environment variable name → config key. */
  readonly env: Readonly<Record<string, EnvSetting>>;
  /** Builds a client. Must not make network calls (so `--help` and dry validation stay offline). */
  create(config: Config): Promise<SecretStore>;
}
