import { z } from 'zod';
import type { ApiCallHook, EnvSetting } from '../factory.js';
import { isLoopbackHost } from '../../util/loopback.js';
import { parseHostOnlyUrl } from '../endpoint-url.js';

/** Settings of the Azure Key Vault store. */
export interface AzureStoreConfig {
  /** The vault's URL, `https://NAME.vault.azure.net` (or a sovereign cloud's suffix; loopback for tests). */
  vaultUrl: string;
  /** Deadline of each Key Vault call, in milliseconds. */
  callTimeoutMs: number;
  /**
   * A PEM file of extra CA certificates to trust, next to the public ones (a private endpoint behind a
   * TLS-inspecting proxy, or a local test server). Applies to the vault and to the token endpoint.
   */
  caFile?: string;
  /** Pause between polls of a soft-delete recovery, in milliseconds. */
  recoverPollMs: number;
  /** Optional observer of API calls, for metrics. Not settable from the environment. */
  onApiCall?: ApiCallHook;
}

/** Default deadline of one Key Vault call. */
const DEFAULT_CALL_TIMEOUT_MS = 30_000;
/** Default pause between recovery polls (the SDK's own default). */
const DEFAULT_RECOVER_POLL_MS = 2_000;

/**
 * Key Vault's limit on one secret value: "a maximum size of 25k bytes"
 * (learn.microsoft.com/azure/key-vault/secrets/about-secrets). 25,000 is the reading that never
 * accepts a value the service refuses.
 */
export const AZURE_PAYLOAD_LIMIT_BYTES = 25_000;

/**
 * DNS suffixes of Key Vault in the public and sovereign clouds: Azure (vault.azure.net), Azure China
 * (vault.azure.cn), Azure US Government (vault.usgovcloudapi.net). A URL elsewhere is refused, so a
 * typo or a hostile setting never sends the workload's token to another host.
 */
const VAULT_DNS_SUFFIXES = ['.vault.azure.net', '.vault.azure.cn', '.vault.usgovcloudapi.net'] as const;

/** Vault names: 3-24 characters, letters, digits and "-", starting with a letter, no "--", not ending with "-". */
const VAULT_NAME = /^(?!.*--)[a-z][a-z0-9-]{1,22}[a-z0-9]$/;

const URL_RULE =
  'must be the vault URL https://NAME.vault.azure.net (or .vault.azure.cn, .vault.usgovcloudapi.net), ' +
  'NAME 3-24 letters, digits or "-", with no path, query or credentials; ' +
  'a loopback host (https://127.0.0.1:PORT) only for tests';

/**
 * The vault URL in its one form (`https://host[:port]`, lowercase, no trailing slash), or
 * `undefined` when it breaks the rule above.
 */
export function normalizeVaultUrl(value: string): string | undefined {
  const url = parseHostOnlyUrl(value);
  if (url === undefined || url.protocol !== 'https:') return undefined;
  const host = url.hostname.toLowerCase();
  if (isLoopbackHost(host)) return url.origin;
  const suffix = VAULT_DNS_SUFFIXES.find((s) => host.endsWith(s));
  if (suffix === undefined || url.port !== '') return undefined;
  return VAULT_NAME.test(host.slice(0, -suffix.length)) ? url.origin : undefined;
}

/** True for a vault on a loopback host: a test server, never a real vault. */
export function isLoopbackVault(vaultUrl: string): boolean {
  return isLoopbackHost(new URL(vaultUrl).hostname);
}

const MS_RULE = 'must be a whole number of milliseconds between 1 and 600000';
const ms = (fallback: number) =>
  z.coerce
    .number({ error: MS_RULE })
    .int({ error: MS_RULE })
    .min(1, { error: MS_RULE })
    .max(600_000, { error: MS_RULE })
    .default(fallback);

/** The settings shared by every vault: everything but `vaultUrl`. */
const sharedShape = {
  callTimeoutMs: ms(DEFAULT_CALL_TIMEOUT_MS),
  caFile: z
    .string({ error: 'must be the path of a PEM file' })
    .min(1, { error: 'must be the path of a PEM file' })
    .optional(),
  recoverPollMs: ms(DEFAULT_RECOVER_POLL_MS),
  onApiCall: z
    .custom<ApiCallHook>((value) => typeof value === 'function', { error: 'must be a function' })
    .optional(),
};

/** The vault URL, normalized; messages describe the rule and never echo the value. */
const vaultUrl = z
  .string({ error: URL_RULE })
  .refine((value) => normalizeVaultUrl(value) !== undefined, { error: URL_RULE })
  .transform((value) => normalizeVaultUrl(value) as string);

/** Schema of `AzureStoreConfig`; accepts the environment's strings and parsed values alike. */
export const azureStoreConfigSchema: z.ZodType<AzureStoreConfig> = z
  .object({ vaultUrl, ...sharedShape })
  .strict();

/** The adapter's `store.settings` for Azure: the vault is not among them (each cluster names it). */
export const azureSharedSettingsSchema = z.object(sharedShape).strict();

/**
 * Environment variables of the Azure store. Only `AZURE_KEY_VAULT_URL` selects the store: the
 * identity variables (`AZURE_CLIENT_ID`, `AZURE_TENANT_ID`, `AZURE_FEDERATED_TOKEN_FILE`) are read
 * by `DefaultAzureCredential` itself and are set by AKS workload identity in pods that never use
 * this store.
 */
export const azureStoreEnv: Readonly<Record<string, EnvSetting>> = {
  AZURE_KEY_VAULT_URL: {
    key: 'vaultUrl',
    help: 'URL of the Azure key vault that holds the pull secrets, https://NAME.vault.azure.net (required).',
  },
  AZURE_KEY_VAULT_CALL_TIMEOUT_MS: {
    key: 'callTimeoutMs',
    help: `Deadline of each Key Vault call in milliseconds (default ${DEFAULT_CALL_TIMEOUT_MS}).`,
  },
  AZURE_KEY_VAULT_CA_FILE: {
    key: 'caFile',
    help:
      'PEM file of extra CA certificates trusted for the vault and the token endpoint, next to the ' +
      'public ones (a private endpoint behind a TLS proxy, or a test server).',
  },
  AZURE_KEY_VAULT_RECOVER_POLL_MS: {
    key: 'recoverPollMs',
    help:
      'Pause between checks while a soft-deleted secret of ours is recovered, ' +
      `in milliseconds (default ${DEFAULT_RECOVER_POLL_MS}).`,
  },
};
