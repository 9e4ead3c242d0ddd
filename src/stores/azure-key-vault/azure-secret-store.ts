import type { KeyVaultSecret, SecretClient, SecretProperties } from '@azure/keyvault-secrets';
import { PullSecretError } from '../../errors/index.js';
import { assertLabels, isManaged } from '../../pullsecret/identifiers.js';
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
import { call, callExpecting, type ApiCallOptions } from './api-call.js';
import { AZURE_PAYLOAD_LIMIT_BYTES, type AzureStoreConfig } from './config.js';
import { isDisabledAnswer, type AzureMethod } from './errors.js';
import {
  assertTags,
  assertVaultSecretName,
  assertVersionId,
  isPlaceholder,
  newestFirst,
  PLACEHOLDER_CONTENT_TYPE,
  PLACEHOLDER_VALUE,
  PULL_SECRET_CONTENT_TYPE,
  toVaultValue,
  toVersionInfo,
  type VersionProperties,
} from './resources.js';
import { serialized } from './secret-mutex.js';

/** Versions asked for per list page. */
const PAGE_SIZE = 25;

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
  private closed = false;

  constructor(
    private readonly client: SecretClient,
    private readonly config: AzureStoreConfig,
  ) {
    this.location = config.vaultUrl;
  }

  secretPath(secretId: string): string {
    return `${this.location}/secrets/${secretId}`;
  }

  /**
   * Metadata from the newest version: one GetSecret; when that version is disabled (Key Vault
   * answers 403 SecretDisabled), the version list. `undefined` when no live secret has the name.
   */
  async getSecret(secretId: string, options?: CallOptions): Promise<SecretMetadata | undefined> {
    const path = this.checkedPath(secretId);
    const latest = await this.getLatest(secretId, options);
    if (latest === 'missing') return undefined;
    if (latest !== 'disabled') return this.metadata(secretId, latest.properties);
    const versions = await this.listVersions(secretId, options);
    const newest = versions?.[0];
    return newest === undefined ? undefined : this.metadata(secretId, newest, path);
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
  async createSecret(
    secretId: string,
    labels: Record<string, string>,
    options?: CreateSecretOptions,
  ): Promise<CreatedSecret | undefined> {
    const path = this.checkedPath(secretId);
    assertLabels(labels);
    assertTags(labels);
    const value = options?.payload === undefined ? undefined : this.vaultValue(options.payload);
    const set = await serialized(path, async () => {
      if ((await this.listVersions(secretId, options, 1)) !== undefined) return undefined;
      return callExpecting(this.target('SetSecret', path), this.callOptions(options), [409], (abortSignal) =>
        value === undefined
          ? this.client.setSecret(secretId, PLACEHOLDER_VALUE, {
              abortSignal,
              enabled: false,
              contentType: PLACEHOLDER_CONTENT_TYPE,
              tags: labels,
            })
          : this.client.setSecret(secretId, value, {
              abortSignal,
              enabled: true,
              contentType: PULL_SECRET_CONTENT_TYPE,
              tags: labels,
            }),
      );
    });
    if (set === undefined) return undefined;
    if (set.ok) {
      const metadata = this.metadata(secretId, set.value.properties);
      return value === undefined
        ? metadata
        : { ...metadata, version: toVersionInfo(path, set.value.properties) };
    }
    await this.recoverIfOurs(secretId, labels, options);
    return undefined;
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
    const path = this.checkedPath(secretId);
    const latest = await this.getLatest(secretId, options);
    if (latest === 'missing') throw this.notFound(path);
    if (latest !== 'disabled') return this.toPayload(path, latest);
    const newest = await this.newestEnabled(secretId, options);
    if (newest === undefined) throw this.notFound(path);
    return newest.version === undefined ? undefined : this.accessVersion(secretId, newest.version, options);
  }

  /** GetSecret of one version. @throws IDENTIFIER_INVALID, SECRET_NOT_FOUND, VERSION_NOT_ENABLED. */
  async accessVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretPayload> {
    const path = this.checkedPath(secretId);
    assertVersionId(version);
    const result = await callExpecting(
      this.target('GetSecret', `${path}/${version}`),
      this.callOptions(options),
      (err) => isDisabledAnswer(err),
      (abortSignal) => this.client.getSecret(secretId, { version, abortSignal }),
    );
    if (!result.ok)
      throw new PullSecretError(
        'VERSION_NOT_ENABLED',
        `Azure Key Vault secret version ${path}/${version} is disabled`,
      );
    return this.toPayload(path, result.value);
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
  async addVersion(secretId: string, data: Buffer, options?: AddVersionOptions): Promise<SecretVersionInfo> {
    const path = this.checkedPath(secretId);
    const value = this.vaultValue(data);
    return serialized(path, async () => {
      const latest = await this.getLatest(secretId, options);
      if (latest === 'missing') throw this.notFound(path);
      let tags: Record<string, string>;
      let newestEnabled: string | null;
      if (latest === 'disabled') {
        const versions = await this.listVersions(secretId, options);
        if (versions === undefined || versions[0] === undefined) throw this.notFound(path);
        tags = { ...(versions[0].tags ?? {}) };
        newestEnabled = versions.find((v) => v.enabled !== false)?.version ?? null;
      } else {
        tags = { ...(latest.properties.tags ?? {}) };
        newestEnabled = latest.properties.version ?? null;
      }
      if (options?.ifLatest !== undefined && newestEnabled !== options.ifLatest) {
        throw new PullSecretError(
          'STORE_PRECONDITION_FAILED',
          `Azure Key Vault secret ${path}: its newest enabled version is now ${newestEnabled ?? 'none'}, not ${options.ifLatest ?? 'none'}; re-reading`,
        );
      }
      assertTags(tags);
      const set = await call(this.target('SetSecret', path), this.callOptions(options), (abortSignal) =>
        this.client.setSecret(secretId, value, {
          abortSignal,
          enabled: true,
          contentType: PULL_SECRET_CONTENT_TYPE,
          tags,
        }),
      );
      return toVersionInfo(path, set.properties);
    });
  }

  /** The version list (newest first, placeholders omitted) and the newest version's tags; `undefined` when missing. */
  async describe(secretId: string, options?: CallOptions): Promise<SecretDescription | undefined> {
    const path = this.checkedPath(secretId);
    const versions = await this.listVersions(secretId, options);
    const newest = versions?.[0];
    if (versions === undefined || newest === undefined) return undefined;
    return {
      ...this.metadata(secretId, newest, path),
      versions: versions.filter((v) => !isPlaceholder(v)).map((v) => toVersionInfo(path, v)),
    };
  }

  /**
   * Soft-deletes the secret with all its versions (BeginDeleteSecret; the vault keeps it for its
   * retention period, recoverable, and it is never purged here). Does not wait for the deletion to
   * finish. False when no live secret has the name.
   */
  async deleteSecret(secretId: string, options?: CallOptions): Promise<boolean> {
    const path = this.checkedPath(secretId);
    const result = await callExpecting(
      this.target('DeleteSecret', path),
      this.callOptions(options),
      [404],
      (abortSignal) => this.client.beginDeleteSecret(secretId, { abortSignal }),
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
    this.closed = true;
    return Promise.resolve();
  }

  private async setEnabled(
    secretId: string,
    version: string,
    enabled: boolean,
    options: CallOptions | undefined,
  ): Promise<SecretVersionInfo> {
    const path = this.checkedPath(secretId);
    assertVersionId(version);
    const result = await callExpecting(
      this.target('UpdateSecret', `${path}/${version}`),
      this.callOptions(options),
      [404],
      (abortSignal) => this.client.updateSecretProperties(secretId, version, { abortSignal, enabled }),
    );
    if (!result.ok)
      throw new PullSecretError(
        'SECRET_NOT_FOUND',
        `Azure Key Vault secret version ${path}/${version} does not exist`,
      );
    return toVersionInfo(path, result.value);
  }

  /** The newest version: the secret, `disabled` (403 SecretDisabled) or `missing` (404). */
  private async getLatest(
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
  private async listVersions(
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
  private async newestEnabled(
    secretId: string,
    options: CallOptions | undefined,
  ): Promise<{ version: string | undefined } | undefined> {
    const versions = await this.listVersions(secretId, options);
    if (versions === undefined) return undefined;
    return { version: versions.find((v) => v.enabled !== false && !isPlaceholder(v))?.version };
  }

  /**
   * After a 409 on the first SetSecret: the name is held by a soft-deleted secret. Ours is recovered
   * (and waited for); a foreign one is refused; one not listed yet is still being deleted.
   */
  private async recoverIfOurs(
    secretId: string,
    labels: Record<string, string>,
    options: CallOptions | undefined,
  ): Promise<void> {
    const path = this.secretPath(secretId);
    const deleted = await callExpecting(
      this.target('GetDeletedSecret', path),
      this.callOptions(options),
      [404],
      (abortSignal) => this.client.getDeletedSecret(secretId, { abortSignal }),
    );
    if (!deleted.ok) {
      throw new PullSecretError(
        'STORE_CONFLICT',
        `Azure Key Vault secret ${path} is being deleted and its name cannot be reused yet; retrying.`,
      );
    }
    const tags = deleted.value.properties.tags ?? {};
    const wanted = labels['cluster-id'];
    if (
      !isManaged(tags) ||
      (wanted !== undefined && tags['cluster-id'] !== undefined && tags['cluster-id'] !== wanted)
    ) {
      throw new PullSecretError(
        'SECRET_UNMANAGED',
        `secret ${path} is soft-deleted in the vault and is not managed by HyperFleet for this cluster; refusing to recover it: its owner must purge or recover it, or set SECRET_NAME to another name`,
      );
    }
    await call(this.target('RecoverDeletedSecret', path), this.callOptions(options), async (abortSignal) => {
      const poller = await this.client.beginRecoverDeletedSecret(secretId, {
        abortSignal,
        intervalInMs: this.config.recoverPollMs,
      });
      return poller.pollUntilDone({ abortSignal });
    });
  }

  private metadata(
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

  private toPayload(path: string, secret: KeyVaultSecret): SecretPayload {
    const version = secret.properties.version ?? '';
    return { version, path: `${path}/${version}`, data: Buffer.from(secret.value ?? '', 'utf8') };
  }

  /** The text Key Vault stores for `data`. @throws PAYLOAD_TOO_LARGE, PULL_SECRET_INVALID */
  private vaultValue(data: Buffer): string {
    if (data.length > this.maxPayloadBytes) {
      throw new PullSecretError(
        'PAYLOAD_TOO_LARGE',
        `pull secret is ${data.length} bytes; Azure Key Vault holds at most ${this.maxPayloadBytes} bytes per secret value`,
      );
    }
    return toVaultValue(data);
  }

  private checkedPath(secretId: string): string {
    if (this.closed) throw new PullSecretError('STORE_FAILED', 'the Azure Key Vault store is closed');
    assertVaultSecretName(secretId);
    return this.secretPath(secretId);
  }

  private notFound(path: string): PullSecretError {
    return new PullSecretError(
      'SECRET_NOT_FOUND',
      `Azure Key Vault secret ${path} does not exist; check AZURE_KEY_VAULT_URL and the secret name.`,
    );
  }

  private target(method: AzureMethod, resource: string) {
    return { method, resource };
  }

  private callOptions(options: CallOptions | undefined): ApiCallOptions {
    return {
      signal: options?.signal,
      timeoutMs: this.config.callTimeoutMs,
      onApiCall: this.config.onApiCall,
    };
  }
}
