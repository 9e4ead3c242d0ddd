import type { StoreFactory } from '../factory.js';
import { PullSecretError } from '../../errors/index.js';
import type { SecretStore } from '../store.js';
import { gcpStoreConfigSchema, gcpStoreEnv, type GcpStoreConfig } from './config.js';
import { GcpSecretStore } from './gcp-secret-store.js';
import { createSdkClient } from './sdk-client.js';

/**
 * The GCP Secret Manager store (`SECRET_STORE=gcp`). Only this folder imports the Secret Manager SDK.
 * `create` validates the config again (it may have been built by hand, e.g. with `onApiCall`) and
 * makes no network call.
 *
 * @throws CONFIG_INVALID from `create` when the config breaks a rule (e.g. plaintext to a
 *   non-loopback endpoint).
 */
export const gcpStoreFactory: StoreFactory<GcpStoreConfig> = {
  kind: 'gcp',
  configSchema: gcpStoreConfigSchema,
  env: gcpStoreEnv,
  create(config: GcpStoreConfig): Promise<SecretStore> {
    const parsed = gcpStoreConfigSchema.safeParse(config);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'config'}: ${issue.message}`);
      return Promise.reject(new PullSecretError('CONFIG_INVALID', `invalid GCP store configuration: ${problems.join('; ')}`));
    }
    const valid = parsed.data;
    // Deferred so that a refusal from createSdkClient becomes a rejection, not a synchronous throw.
    return Promise.resolve().then(() => new GcpSecretStore(createSdkClient(valid), valid));
  },
};

export { GcpSecretStore, GCP_MAX_PAYLOAD_BYTES, type GcpCallOptions } from './gcp-secret-store.js';
export { gcpStoreConfigSchema, gcpStoreEnv, DEFAULT_CALL_TIMEOUT_MS, type GcpStoreConfig, type ApiCallHook } from './config.js';
export { classifyGcpError, grpcCodeName, type GcpMethod } from './errors.js';
