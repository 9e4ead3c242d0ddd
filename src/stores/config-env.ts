import { envTable } from '../config/env-table.js';
import { DEFAULT_STORE_KIND, STORE_KINDS, storeFactories } from './registry.js';

/**
 * Our environment variables with the stores' own (src/config/env-table.ts over the store registry):
 * what the job reads, what the adapter reads and projects onto its Jobs, and what `--help` lists.
 */
export const { configEnv, envFor, sectionEnv, projectJobEnv } = envTable({
  kinds: STORE_KINDS,
  defaultKind: DEFAULT_STORE_KIND,
  stores: storeFactories,
});
