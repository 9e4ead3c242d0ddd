import { readFile } from 'node:fs/promises';
import { PullSecretError } from '../../errors/index.js';
import type { StoreHooks } from '../factory.js';
import type { SecretStore } from '../store.js';
import { AzureSecretStore } from './azure-secret-store.js';
import { azureStoreConfigSchema, type AzureStoreConfig } from './config.js';
import { createSecretClient } from './sdk-client.js';

/** Reads the extra CA file. @throws CONFIG_INVALID when it cannot be read or holds no certificate. */
async function readCa(path: string): Promise<string> {
  let pem: string;
  try {
    pem = await readFile(path, 'utf8');
  } catch (err) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `invalid environment variable AZURE_KEY_VAULT_CA_FILE: cannot read the file ` +
        `(${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new PullSecretError(
      'CONFIG_INVALID',
      'invalid environment variable AZURE_KEY_VAULT_CA_FILE: holds no PEM certificate',
    );
  return pem;
}

/**
 * Builds the Azure Key Vault store (the SDK-heavy half of the descriptor). Validates the config
 * again (it may have been built by hand), reads the CA file when one is set, and makes no network
 * call; the hook, when given, observes every Key Vault call.
 *
 * @throws CONFIG_INVALID (as a rejection) when the config breaks a rule or the CA file is unusable.
 */
export async function createAzureStore(
  config: AzureStoreConfig,
  hooks: StoreHooks = {},
): Promise<SecretStore> {
  const parsed = azureStoreConfigSchema.safeParse(
    hooks.onApiCall === undefined ? config : { ...config, onApiCall: hooks.onApiCall },
  );
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || 'config'}: ${issue.message}`,
    );
    throw new PullSecretError('CONFIG_INVALID', `invalid Azure store configuration: ${problems.join('; ')}`);
  }
  const valid = parsed.data;
  const ca = valid.caFile === undefined ? undefined : await readCa(valid.caFile);
  return new AzureSecretStore(createSecretClient(valid, ca), valid);
}
