/**
 * The Azure Key Vault store: the `SecretStore` contract over the calls in key-vault-api.ts, with its
 * writes in write-path.ts.
 */
import type { SecretClient } from '@azure/keyvault-secrets';
import { PullSecretError } from '../../errors/index.js';
import type {
  AccessLatestOptions,
  AddVersionOptions,
  CallOptions,
  CreatedSecret,
  CreateSecretOptions,
  SecretDescription,
  SecretMetadata,
  SecretPayload,
  SecretStore,
  SecretVersionInfo,
} from '../store.js';
import { callExpecting } from './api-call.js';
import { AZURE_PAYLOAD_LIMIT_BYTES, type AzureStoreConfig } from './config.js';
import { isDisabledAnswer } from './errors.js';
import { KeyVaultApi } from './key-vault-api.js';
import { assertVersionId, isPlaceholder, toVersionInfo } from './resources.js';
import { addVaultVersion, createVaultSecret } from './write-path.js';

/**
 * `SecretStore` on Azure Key Vault through `@azure/keyvault-secrets`. Every method validates the
 * secret name first (IDENTIFIER_INVALID, no call made) and throws only `PullSecretError`.
 *
 * How the contract maps onto Key Vault:
 * - Metadata: Key Vault keeps tags, content type and the enabled flag per version; a secret's
 *   labels are its newest version's tags, and each new version carries them over (others' tags
 *   included). Key Vault has no secret-level creation time or etag: `createdTime` is the newest
 *   version's, `etag` is absent.
 * - `createSecret`: Key Vault creates a secret by setting its first version, so a push's create is
 *   one SetSecret holding the pull secret with our tags: no placeholder, nothing visible without its
 *   content. Only a create without a payload (the contract's "a secret with no version", which no
 *   push makes) sets a disabled placeholder version holding a fixed text; placeholders, also those
 *   earlier releases set on every new secret, are never read as content and `describe` omits them.
 * - Soft delete: a name held by a soft-deleted secret cannot be set (409). `createSecret` then reads
 *   the deleted secret: ours (managed-by=hyperfleet, same cluster) is recovered, not recreated under
 *   another name; a foreign one is refused. `deleteSecret` soft-deletes and never purges.
 * - Concurrency: Key Vault has no conditional write. `addVersion` with `ifLatest` re-reads the newest
 *   enabled version right before it sets a new one and refuses when it moved; within one process all
 *   clients of a vault serialize that read and write per secret, so concurrent writers of the same
 *   content end with one version. Writers in different processes can still interleave between the
 *   re-read and the write (a window of one call): then the secret may get one extra version holding
 *   the same or the newer content; nothing is lost and the next push compares against it.
 * - Order: GetSecret without a version answers the newest version exactly; lists are ordered by
 *   `createdOn`, which Key Vault gives in whole seconds, so versions set within the same second
 *   cannot be told apart there (this matters only after the newest version was disabled).
 */
export class AzureSecretStore implements SecretStore {
  readonly kind = 'azure';
  readonly maxPayloadBytes = AZURE_PAYLOAD_LIMIT_BYTES;
  readonly location: string;
  private readonly api: KeyVaultApi;

  constructor(client: SecretClient, config: AzureStoreConfig) {
    this.api = new KeyVaultApi(client, config);
    this.location = this.api.location;
  }

  secretPath(secretId: string): string {
    return this.api.secretPath(secretId);
  }

  /**
   * Metadata from the newest version: one GetSecret; when that version is disabled (Key Vault
   * answers 403 SecretDisabled), the version list. `undefined` when no live secret has the name.
   */
  async getSecret(secretId: string, options?: CallOptions): Promise<SecretMetadata | undefined> {
    const path = this.api.checkedPath(secretId);
    const latest = await this.api.getLatest(secretId, options);
    if (latest === 'missing') return undefined;
    if (latest !== 'disabled') return this.api.metadata(secretId, latest.properties);
    const versions = await this.api.listVersions(secretId, options);
    const newest = versions?.[0];
    return newest === undefined ? undefined : this.api.metadata(secretId, newest, path);
  }

  /**
   * Sets the first version: `options.payload` (enabled, content type `application/json`), or without
   * one the disabled placeholder (see the class comment), with `labels` as tags. First checks that no
   * live secret has the name (one list call: an empty page means none), so nothing is ever written
   * to a secret whose ownership was not checked; within this process creates and adds of one secret
   * are serialized. `undefined` when the secret exists, or when a soft-deleted secret of ours was
   * recovered (the caller reads it). Calls: 2; 4 when recovering.
   *
   * @throws PAYLOAD_TOO_LARGE, PULL_SECRET_INVALID (before any call); SECRET_UNMANAGED for a
   *   soft-deleted secret that is not ours (it must be purged or recovered by its owner);
   *   STORE_CONFLICT while a deletion is still in progress.
   */
  createSecret(
    secretId: string,
    labels: Record<string, string>,
    options?: CreateSecretOptions,
  ): Promise<CreatedSecret | undefined> {
    return createVaultSecret(this.api, secretId, labels, options);
  }

  /**
   * GetSecret of the newest version: one call when it is enabled. When it is disabled (403
   * SecretDisabled), lists the versions and reads the newest enabled one. Key Vault answers 404 only
   * when no live secret has the name, so SECRET_NOT_FOUND is exact (`skipExistenceCheck` changes nothing).
   *
   * @throws SECRET_NOT_FOUND when the secret does not exist.
   */
  async accessLatestEnabled(
    secretId: string,
    options?: AccessLatestOptions,
  ): Promise<SecretPayload | undefined> {
    const path = this.api.checkedPath(secretId);
    const latest = await this.api.getLatest(secretId, options);
    if (latest === 'missing') throw this.api.notFound(path);
    if (latest !== 'disabled') return this.api.toPayload(path, latest);
    const newest = await this.api.newestEnabled(secretId, options);
    if (newest === undefined) throw this.api.notFound(path);
    return newest.version === undefined ? undefined : this.accessVersion(secretId, newest.version, options);
  }

  /** GetSecret of one version. @throws IDENTIFIER_INVALID, SECRET_NOT_FOUND, VERSION_NOT_ENABLED. */
  async accessVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretPayload> {
    const path = this.api.checkedPath(secretId);
    assertVersionId(version);
    const result = await callExpecting(
      this.api.target('GetSecret', `${path}/${version}`),
      this.api.callOptions(options),
      (err) => isDisabledAnswer(err),
      (abortSignal) => this.api.client.getSecret(secretId, { version, abortSignal }),
    );
    if (!result.ok)
      throw new PullSecretError(
        'VERSION_NOT_ENABLED',
        `Azure Key Vault secret version ${path}/${version} is disabled`,
      );
    return this.api.toPayload(path, result.value);
  }

  /**
   * Sets a new version holding `data` (content type `application/json`, the newest version's tags
   * carried over). Reads the newest version first (one GetSecret, plus the list when it is
   * disabled): for its tags, to answer SECRET_NOT_FOUND, and with `ifLatest` to refuse when the
   * newest enabled version moved. Calls: 2, or 3 after a disabled newest version.
   *
   * @throws PAYLOAD_TOO_LARGE and PULL_SECRET_INVALID (before any call), SECRET_NOT_FOUND,
   *   STORE_PRECONDITION_FAILED.
   */
  addVersion(secretId: string, data: Buffer, options?: AddVersionOptions): Promise<SecretVersionInfo> {
    return addVaultVersion(this.api, secretId, data, options);
  }

  /** The version list (newest first, placeholders omitted) and the newest version's tags; `undefined` when missing. */
  async describe(secretId: string, options?: CallOptions): Promise<SecretDescription | undefined> {
    const path = this.api.checkedPath(secretId);
    const versions = await this.api.listVersions(secretId, options);
    const newest = versions?.[0];
    if (versions === undefined || newest === undefined) return undefined;
    return {
      ...this.api.metadata(secretId, newest, path),
      versions: versions.filter((v) => !isPlaceholder(v)).map((v) => toVersionInfo(path, v)),
    };
  }

  /**
   * Soft-deletes the secret with all its versions (BeginDeleteSecret; the vault keeps it for its
   * retention period, recoverable, and it is never purged here). Does not wait for the deletion to
   * finish. False when no live secret has the name.
   */
  async deleteSecret(secretId: string, options?: CallOptions): Promise<boolean> {
    const path = this.api.checkedPath(secretId);
    const result = await callExpecting(
      this.api.target('DeleteSecret', path),
      this.api.callOptions(options),
      [404],
      (abortSignal) => this.api.client.beginDeleteSecret(secretId, { abortSignal }),
    );
    return result.ok;
  }

  /**
   * Disables a version (UpdateSecret of the version's attributes, `enabled: false`): kept, no longer
   * served. Key Vault has no per-version destroy, so this store has no `destroyVersion`: retention
   * only disables here (docs/retention.md). @throws SECRET_NOT_FOUND, IDENTIFIER_INVALID
   */
  disableVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretVersionInfo> {
    return this.setEnabled(secretId, version, false, options);
  }

  /** Enables a version again (UpdateSecret, `enabled: true`). @throws SECRET_NOT_FOUND, IDENTIFIER_INVALID */
  enableVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretVersionInfo> {
    return this.setEnabled(secretId, version, true, options);
  }

  async close(): Promise<void> {
    // The SDK keeps no connection that needs closing; a closed store refuses further calls.
    this.api.closed = true;
    return Promise.resolve();
  }

  private async setEnabled(
    secretId: string,
    version: string,
    enabled: boolean,
    options: CallOptions | undefined,
  ): Promise<SecretVersionInfo> {
    const path = this.api.checkedPath(secretId);
    assertVersionId(version);
    const result = await callExpecting(
      this.api.target('UpdateSecret', `${path}/${version}`),
      this.api.callOptions(options),
      [404],
      (abortSignal) => this.api.client.updateSecretProperties(secretId, version, { abortSignal, enabled }),
    );
    if (!result.ok)
      throw new PullSecretError(
        'SECRET_NOT_FOUND',
        `Azure Key Vault secret version ${path}/${version} does not exist`,
      );
    return toVersionInfo(path, result.value);
  }
}
