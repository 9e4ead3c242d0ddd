/**
 * A protocol-faithful AWS Secrets Manager test server for integration and contract tests: the JSON
 * 1.1 protocol with SigV4 verification, the service's rules and error bodies, call counting, fault
 * injection and direct state access. Test code only.
 */
export {
  startAwsSecretsManagerTestServer,
  TEST_CREDENTIALS,
  OPERATIONS,
  WRITES,
  type AwsSecretsManagerTestServer,
  type AwsSecretsManagerTestServerOptions,
  type AwsFaultSpec,
  type AwsCallRecord,
  type Operation,
} from './server.js';
export {
  SecretsManagerState,
  MAX_SECRET_BYTES,
  MAX_TAGS,
  type StoredSecret,
  type StoredVersion,
} from './state.js';
export { verifySigV4, type TestCredential } from './sigv4.js';
