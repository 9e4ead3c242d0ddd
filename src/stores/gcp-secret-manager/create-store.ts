import { PullSecretError } from '../../errors/index.js';
import type { StoreHooks } from '../factory.js';
import type { SecretStore } from '../store.js';
import { gcpStoreConfigSchema, type GcpStoreConfig } from './config.js';
import { GcpSecretStore } from './gcp-secret-store.js';
import { createSdkClient } from './sdk-client.js';

/**
 * Builds the GCP Secret Manager store (the SDK-heavy half of the descriptor). Validates the config
 * again (it may have been built by hand) and makes no network call; the hook, when given, observes
 * every RPC.
 *
 * @throws CONFIG_INVALID (as a rejection) when the config breaks a rule (e.g. plaintext to a
 *   non-loopback endpoint).
 */
export function createGcpStore(config: GcpStoreConfig, hooks: StoreHooks = {}): Promise<SecretStore> {
  const parsed = gcpStoreConfigSchema.safeParse(
    hooks.onApiCall === undefined ? config : { ...config, onApiCall: hooks.onApiCall },
  );
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || 'config'}: ${issue.message}`,
    );
    return Promise.reject(
      new PullSecretError('CONFIG_INVALID', `invalid GCP store configuration: ${problems.join('; ')}`),
    );
  }
  const valid = parsed.data;
  // Deferred so that a refusal from createSdkClient becomes a rejection, not a synchronous throw.
  return Promise.resolve().then(() => new GcpSecretStore(createSdkClient(valid), valid));
}
