/**
 * A protocol-faithful Azure Key Vault (secrets) test server with a loopback Entra ID token endpoint,
 * for integration and contract tests. Test code only.
 */
export {
  startKeyVaultTestServer,
  API_VERSIONS,
  type KeyVaultTestServer,
  type KeyVaultTestServerOptions,
} from './server.js';
export { VaultState, MAX_VALUE_BYTES, MAX_TAGS, type StoredSecret, type StoredVersion } from './state.js';
export { OPERATIONS, type FaultSpec, type Operation } from './faults.js';
export { KEY_VAULT_RESOURCE } from './identity.js';
