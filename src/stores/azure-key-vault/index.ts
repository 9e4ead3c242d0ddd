/**
 * The Azure Key Vault store (`SECRET_STORE=azure`). Importing this module loads the SDK; the
 * registry imports `descriptor.ts` instead, which loads it on first use.
 */
export { azureStoreFactory } from './descriptor.js';
export { createAzureStore } from './create-store.js';
export { AzureSecretStore } from './azure-secret-store.js';
export {
  azureStoreConfigSchema,
  azureStoreEnv,
  normalizeVaultUrl,
  AZURE_PAYLOAD_LIMIT_BYTES,
  type AzureStoreConfig,
} from './config.js';
export { classifyAzureError, type AzureMethod } from './errors.js';
export { KEY_VAULT_API_VERSION } from './sdk-client.js';
