/**
 * The GCP Secret Manager store (`SECRET_STORE=gcp`). Importing this module loads the SDK; the
 * registry imports `descriptor.ts` instead, which loads it on first use.
 */
export { gcpStoreFactory } from './descriptor.js';
export { createGcpStore } from './create-store.js';
export { GcpSecretStore, GCP_MAX_PAYLOAD_BYTES, type GcpCallOptions } from './gcp-secret-store.js';
export {
  gcpStoreConfigSchema,
  gcpStoreEnv,
  DEFAULT_CALL_TIMEOUT_MS,
  type GcpStoreConfig,
  type ApiCallHook,
} from './config.js';
export { classifyGcpError, grpcCodeName, type GcpMethod } from './errors.js';
