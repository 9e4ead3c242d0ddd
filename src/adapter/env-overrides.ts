import { envFor } from '../config/env-table.js';

/**
 * Environment variable → config path (dotted) of every override the adapter reads: ours, the
 * shared ones the job reads too, and each store's settings. An override wins over the file.
 */
export const ENV_OVERRIDES: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(envFor('adapter')).map(([name, v]) => [name, v.path]));
