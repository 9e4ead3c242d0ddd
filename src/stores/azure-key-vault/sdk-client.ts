import { rootCertificates } from 'node:tls';
import { DefaultAzureCredential } from '@azure/identity';
import { SecretClient } from '@azure/keyvault-secrets';
import { isLoopbackHost } from '../../util/loopback.js';
import { isLoopbackVault, type AzureStoreConfig } from './config.js';

/** The API version this store speaks (the SDK's newest; the test server checks it). */
export const KEY_VAULT_API_VERSION = '2025-07-01';

/** True when AZURE_AUTHORITY_HOST names a loopback token endpoint: a test, with no cloud instance metadata. */
function loopbackAuthority(env: NodeJS.ProcessEnv): boolean {
  const host = env.AZURE_AUTHORITY_HOST;
  if (host === undefined || host === '') return false;
  try {
    return isLoopbackHost(new URL(host).hostname);
  } catch {
    return false;
  }
}

/**
 * Builds the official SDK client. Makes no network call: the credential fetches a token on the
 * first request, after Key Vault's authentication challenge.
 *
 * - Credentials: `DefaultAzureCredential`, i.e. AKS workload identity in production
 *   (AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE set by the webhook), `az login`
 *   at a workstation.
 * - No SDK retries on Key Vault calls (`maxRetries: 0`): the caller retries each step and honours
 *   `Retry-After`.
 * - `caPem` (AZURE_KEY_VAULT_CA_FILE): trusted next to the public CAs (Node's list), for the vault
 *   and the token endpoint alike.
 * - A loopback vault (tests only) skips the SDK's check that the challenge's resource matches the
 *   vault's domain (an IP address has none); a loopback authority skips AAD instance discovery
 *   (it would ask login.microsoftonline.com about a host it cannot know). Real vaults keep both.
 */
export function createSecretClient(
  config: AzureStoreConfig,
  caPem: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): SecretClient {
  const tlsOptions = caPem === undefined ? {} : { tlsOptions: { ca: [...rootCertificates, caPem] } };
  // The credential keeps its own retries: a token request writes nothing, so repeating it is safe.
  const credential = new DefaultAzureCredential({
    ...tlsOptions,
    ...(loopbackAuthority(env) ? { disableInstanceDiscovery: true } : {}),
  });
  return new SecretClient(config.vaultUrl, credential, {
    ...tlsOptions,
    retryOptions: { maxRetries: 0 },
    serviceVersion: KEY_VAULT_API_VERSION,
    disableChallengeResourceVerification: isLoopbackVault(config.vaultUrl),
  });
}
