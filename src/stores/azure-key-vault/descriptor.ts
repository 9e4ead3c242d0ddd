import { schemaProblems } from '../../config/problems.js';
import type { StoreFactory } from '../factory.js';
import {
  AZURE_PAYLOAD_LIMIT_BYTES,
  azureSharedSettingsSchema,
  azureStoreConfigSchema,
  azureStoreEnv,
  type AzureStoreConfig,
} from './config.js';

/**
 * Key Vault's service limit for secrets (learn.microsoft.com/azure/key-vault/general/service-limits,
 * "Secrets, managed storage account keys, and vault transactions"): 4,000 transactions per vault and
 * region in 10 seconds, i.e. 24,000 a minute, reads and writes together. Half of it goes to each
 * kind so that both paced at their limit still stay within the shared one.
 */
const QUOTA_PER_MINUTE = 12_000;

/**
 * The Azure Key Vault store (`SECRET_STORE=azure`), declared without its SDK: `create` loads
 * `@azure/keyvault-secrets` and `@azure/identity` on first use, and the preflight checks by
 * `preflight.load`. Only this folder imports the Azure SDKs. The quota scope is the vault.
 */
export const azureStoreFactory: StoreFactory<AzureStoreConfig> = {
  kind: 'azure',
  title: 'Azure Key Vault',
  configSchema: azureStoreConfigSchema,
  env: azureStoreEnv,
  // Only the vault URL selects this store; see azureStoreEnv for why the identity variables do not.
  selectedBy: ['AZURE_KEY_VAULT_URL'],
  maxPayloadBytes: AZURE_PAYLOAD_LIMIT_BYTES,
  scope: {
    settingKeys: ['vaultUrl'],
    noun: 'Azure key vault',
    // The status `data.location` is the vault URL; no extra status field is needed.
    location: (scope) => scope.vaultUrl ?? '',
    logFields: (scope) => ({ azure_key_vault: scope.vaultUrl ?? '' }),
  },
  quotas: { writesPerMinute: QUOTA_PER_MINUTE, readsPerMinute: QUOTA_PER_MINUTE },
  // The AKS webhook injects the AZURE_* variables and the token file only into pods so labelled.
  jobPod: { labels: { 'azure.workload.identity/use': 'true' } },
  apiCalls: {
    methods: [
      'GetSecret',
      'SetSecret',
      'GetSecretVersions',
      'DeleteSecret',
      'GetDeletedSecret',
      'RecoverDeletedSecret',
      'UpdateSecret',
    ],
    codes: [
      'OK',
      'NOT_FOUND',
      'FORBIDDEN',
      'CONFLICT',
      'TOO_MANY_REQUESTS',
      'UNAUTHORIZED',
      'UNAVAILABLE',
      'TIMEOUT',
    ],
  },
  preflight: {
    summary: 'credentials, the vault and the Key Vault data-plane rights of the adapter identity',
    help: [
      'Checks the rights of whoever runs it: run it as the adapter (kubectl exec into its pod, where AKS',
      'workload identity sets AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_FEDERATED_TOKEN_FILE) or after `az login`.',
      'AZURE_KEY_VAULT_CALL_TIMEOUT_MS and AZURE_KEY_VAULT_CA_FILE apply as for run-job.',
      'Makes at most two read-only Key Vault calls; writes nothing.',
    ].join('\n'),
    options: [
      {
        flags: '--vault-url <url>',
        description: 'URL of the key vault that will hold the pull secrets (default AZURE_KEY_VAULT_URL)',
      },
      {
        flags: '--assignee <object-id>',
        description: "object (principal) id of the adapter's managed identity, for the printed fixes",
      },
      {
        flags: '--vault-resource-id <id>',
        description:
          "the vault's Azure resource id, /subscriptions/SUB/resourceGroups/RG/providers/Microsoft.KeyVault/vaults/NAME, for the printed fixes",
      },
    ],
    load: async () => (await import('./preflight/run-cli.js')).runAzurePreflight,
  },
  validate: (settings) => schemaProblems(azureSharedSettingsSchema, settings),
  create: async (config, hooks) => (await import('./create-store.js')).createAzureStore(config, hooks),
};
