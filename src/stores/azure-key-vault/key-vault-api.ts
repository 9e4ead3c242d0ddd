/**
 * The Azure Key Vault calls the store is built from: the newest version, the version list, and
 * each call's deadline, plus the mapping of Key Vault's answers to the store's types.
 */
import type { KeyVaultSecret, SecretClient, SecretProperties } from '@azure/keyvault-secrets';
import { PullSecretError } from '../../errors/index.js';
import type { CallOptions, SecretMetadata, SecretPayload } from '../store.js';
import { callExpecting, type ApiCallOptions } from './api-call.js';
import { AZURE_PAYLOAD_LIMIT_BYTES, type AzureStoreConfig } from './config.js';
import { isDisabledAnswer, type AzureMethod } from './errors.js';
import {
  assertVaultSecretName,
  isPlaceholder,
  newestFirst,
  toVaultValue,
  type VersionProperties,
} from './resources.js';

/** Versions asked for per list page. */
const PAGE_SIZE = 25;

/** One Key Vault secret client of one configured vault, and the store's use of its answers. */
export class KeyVaultApi {
  readonly location: string;
  closed = false;

  constructor(
    readonly client: SecretClient,
    readonly config: AzureStoreConfig,
  ) {
    this.location = config.vaultUrl;
  }

  secretPath(secretId: string): string {
    return `${this.location}/secrets/${secretId}`;
  }

  /** The newest version: the secret, `disabled` (403 SecretDisabled) or `missing` (404). */
  async getLatest(
    secretId: string,
    options: CallOptions | undefined,
  ): Promise<KeyVaultSecret | 'disabled' | 'missing'> {
    const path = this.secretPath(secretId);
    const result = await callExpecting(
      this.target('GetSecret', path),
      this.callOptions(options),
      (err) => isDisabledAnswer(err) || (err as { statusCode?: unknown }).statusCode === 404,
      (abortSignal) => this.client.getSecret(secretId, { abortSignal }),
    );
    if (result.ok) return result.value;
    return result.status === 404 ? 'missing' : 'disabled';
  }

  /**
   * Every version's properties (with `firstPageOnly`, one page of that size), newest first; `undefined` when no
   * live secret has the name. Key Vault answers a name without a live secret (never set, or soft-deleted) with
   * 200 and an empty list, not 404 (the SDK's recordings of the live service): an empty list means "no secret".
   */
  async listVersions(
    secretId: string,
    options: CallOptions | undefined,
    firstPageOnly?: number,
  ): Promise<SecretProperties[] | undefined> {
    const path = this.secretPath(secretId);
    const result = await callExpecting(
      this.target('GetSecretVersions', path),
      this.callOptions(options),
      [404],
      async (abortSignal) => {
        const all: SecretProperties[] = [];
        for await (const page of this.client
          .listPropertiesOfSecretVersions(secretId, { abortSignal })
          .byPage({ maxPageSize: firstPageOnly ?? PAGE_SIZE })) {
          all.push(...page);
          if (firstPageOnly !== undefined) break;
        }
        return all;
      },
    );
    return result.ok && result.value.length > 0 ? newestFirst(result.value) : undefined;
  }

  /** The newest enabled version's id (`version: undefined` when none); `undefined` when the secret is gone. */
  async newestEnabled(
    secretId: string,
    options: CallOptions | undefined,
  ): Promise<{ version: string | undefined } | undefined> {
    const versions = await this.listVersions(secretId, options);
    if (versions === undefined) return undefined;
    return { version: versions.find((v) => v.enabled !== false && !isPlaceholder(v))?.version };
  }

  metadata(
    secretId: string,
    properties: VersionProperties,
    path = this.secretPath(secretId),
  ): SecretMetadata {
    return {
      name: secretId,
      path,
      labels: { ...(properties.tags ?? {}) },
      createdTime: (properties.createdOn ?? new Date(0)).toISOString(),
    };
  }

  toPayload(path: string, secret: KeyVaultSecret): SecretPayload {
    const version = secret.properties.version ?? '';
    return { version, path: `${path}/${version}`, data: Buffer.from(secret.value ?? '', 'utf8') };
  }

  /** The text Key Vault stores for `data`. @throws PAYLOAD_TOO_LARGE, PULL_SECRET_INVALID */
  vaultValue(data: Buffer): string {
    if (data.length > AZURE_PAYLOAD_LIMIT_BYTES) {
      throw new PullSecretError(
        'PAYLOAD_TOO_LARGE',
        `pull secret is ${data.length} bytes; ` +
          `Azure Key Vault holds at most ${AZURE_PAYLOAD_LIMIT_BYTES} bytes per secret value`,
      );
    }
    return toVaultValue(data);
  }

  checkedPath(secretId: string): string {
    if (this.closed) throw new PullSecretError('STORE_FAILED', 'the Azure Key Vault store is closed');
    assertVaultSecretName(secretId);
    return this.secretPath(secretId);
  }

  notFound(path: string): PullSecretError {
    return new PullSecretError(
      'SECRET_NOT_FOUND',
      `Azure Key Vault secret ${path} does not exist; check AZURE_KEY_VAULT_URL and the secret name.`,
    );
  }

  target(method: AzureMethod, resource: string) {
    return { method, resource };
  }

  callOptions(options: CallOptions | undefined): ApiCallOptions {
    return {
      signal: options?.signal,
      timeoutMs: this.config.callTimeoutMs,
      onApiCall: this.config.onApiCall,
    };
  }
}
