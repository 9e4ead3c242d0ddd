/**
 * A protocol-faithful GCP Secret Manager test server for integration and contract tests: the real
 * v1 gRPC service from the SDK's own protos, the service's rules and status codes, call counting,
 * fault injection and direct state access. Test code only.
 */
export {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
  type SecretManagerTestServerOptions,
} from './server.js';
export type { FaultSpec } from './faults.js';
export type { CallRecord } from './calls.js';
export {
  QuotaEnforcer,
  QUOTA_OF,
  SECRET_MANAGER_QUOTAS,
  type QuotaName,
  type QuotaSettings,
} from './quotas.js';
export { SecretManagerState, type SeedSecret, type StoredSecret, type StoredVersion } from './state.js';
export { METHOD_NAMES, type MethodName, type VersionState } from './types.js';
export { MAX_PAYLOAD_BYTES, MAX_LABELS } from './rules.js';
export { installLoopbackGuard, type LoopbackGuard } from './loopback-guard.js';
