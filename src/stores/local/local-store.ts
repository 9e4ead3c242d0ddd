import { randomBytes } from 'node:crypto';
import { PullSecretError } from '../../errors/index.js';
import { assertLabels, assertSecretId, quoteIdentifier } from '../../pullsecret/identifiers.js';
import type {
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
import { decryptPayload, encryptPayload } from './crypto.js';
import { nextVersionNumber, RECORD_FORMAT, type SecretRecord, type VersionRecord } from './secret-record.js';
import { SecretFiles, type ActiveKey, type Change, type SecretFilesOptions } from './secret-files.js';

/** Secret Manager's limit on one version's payload. */
export const LOCAL_MAX_PAYLOAD_BYTES = 65_536;
/** Secret Manager's limit on labels per secret. */
const MAX_LABELS = 64;
const VERSION_ID = /^[1-9][0-9]{0,14}$/;

/** Where the store lives and where its key comes from. */
export type LocalStoreOptions = SecretFilesOptions;

/**
 * The embedded secret store: one JSON file per secret under `{dir}/secrets/`, version payloads
 * encrypted with AES-256-GCM, modelled on GCP Secret Manager (ids, labels, etag, numbered versions
 * with ENABLED / DISABLED / DESTROYED states, 64 KiB payloads) so behaviour carries over to GCP.
 *
 * Writes are atomic (temp file, fsync, rename, fsync dir) and serialized per secret by a
 * cross-process lock, so concurrent processes never lose or reuse a version. Reads take no lock.
 * Nothing touches the disk until the first call; the store directory and key file are created then.
 *
 * Every method throws only PullSecretError: IDENTIFIER_INVALID / STORE_INVALID_REQUEST for bad
 * input, ABORTED, STORE_CORRUPT (tampered data or wrong key), STORE_CONFLICT (lock busy too long),
 * STORE_PERMISSION_DENIED, STORE_UNAVAILABLE (retryable filesystem errors), STORE_FAILED.
 */
export class LocalStore implements SecretStore {
  readonly kind = 'local';
  readonly maxPayloadBytes = LOCAL_MAX_PAYLOAD_BYTES;
  /** Absolute store directory. */
  readonly location: string;
  readonly #files: SecretFiles;
  #closed = false;

  /** @throws PullSecretError CONFIG_INVALID when `options.key` is not 32 bytes. */
  constructor(options: LocalStoreOptions) {
    this.#files = new SecretFiles(options);
    this.location = this.#files.location;
  }

  /** `local:secrets/{id}`: stable, readable in logs, shaped like Secret Manager's resource names. */
  secretPath(secretId: string): string {
    return `local:secrets/${secretId}`;
  }

  async getSecret(secretId: string, options?: CallOptions): Promise<SecretMetadata | undefined> {
    const { record } = await this.#read(secretId, options);
    return record === undefined ? undefined : this.#metadata(record);
  }

  /** One record write under the secret's lock: the labels and, with `payload`, version 1 holding it. */
  async createSecret(
    secretId: string,
    labels: Record<string, string>,
    options?: CreateSecretOptions,
  ): Promise<CreatedSecret | undefined> {
    assertSecretId(secretId);
    assertLabels(labels);
    if (Object.keys(labels).length > MAX_LABELS) {
      throw new PullSecretError('STORE_INVALID_REQUEST', `a secret may carry at most ${MAX_LABELS} labels`);
    }
    const data = options?.payload;
    if (data !== undefined) assertPayloadSize(data);
    return this.#mutate(secretId, options, (current, active) => {
      if (current !== undefined) return { result: undefined };
      const first = data === undefined ? undefined : newVersion(secretId, 1, data, active);
      const versions = first === undefined ? [] : [first];
      const record: SecretRecord = {
        format: RECORD_FORMAT,
        id: secretId,
        labels: { ...labels },
        createTime: now(),
        etag: newEtag(),
        versions,
      };
      const version = first === undefined ? {} : { version: this.#versionInfo(secretId, first) };
      return { write: record, result: { ...this.#metadata(record), ...version } };
    });
  }

  /**
   * One lock-free read of the record (a `stat` when its parse is cached) and one decryption: all a
   * no-op push costs here. A missing secret is known from that read, so `skipExistenceCheck` changes nothing.
   */
  async accessLatestEnabled(secretId: string, options?: CallOptions): Promise<SecretPayload | undefined> {
    const { record, active } = await this.#read(secretId, options);
    const found = this.#mustExist(secretId, record);
    const latest = newestEnabled(found);
    return latest === undefined ? undefined : this.#payload(found, latest, active);
  }

  async accessVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretPayload> {
    const number = parseVersion(version);
    const { record, active } = await this.#read(secretId, options);
    const existing = this.#mustExist(secretId, record);
    const found = this.#findVersion(existing, number);
    if (found.state !== 'ENABLED') {
      throw new PullSecretError(
        'VERSION_NOT_ENABLED',
        `version ${this.#versionPath(secretId, number)} is ${found.state}`,
      );
    }
    return this.#payload(existing, found, active);
  }

  /**
   * Appends a version under the secret's lock. `ifLatest` is checked under that same lock, so among
   * all processes sharing the directory exactly one of several compare-and-adds on one newest
   * version succeeds.
   */
  async addVersion(secretId: string, data: Buffer, options?: AddVersionOptions): Promise<SecretVersionInfo> {
    assertSecretId(secretId);
    assertPayloadSize(data);
    return this.#mutate(secretId, options, (current, active) => {
      const record = this.#mustExist(secretId, current);
      if (options?.ifLatest !== undefined) {
        const latest = newestEnabled(record);
        const seen = latest === undefined ? null : String(latest.version);
        if (seen !== options.ifLatest) {
          throw new PullSecretError(
            'STORE_PRECONDITION_FAILED',
            `secret ${this.secretPath(secretId)} changed concurrently: its newest enabled version is ` +
              `${seen ?? 'none'}, not ${options.ifLatest ?? 'none'}`,
          );
        }
      }
      const added = newVersion(secretId, nextVersionNumber(record), data, active);
      return {
        write: { ...record, versions: [...record.versions, added] },
        result: this.#versionInfo(secretId, added),
      };
    });
  }

  async describe(secretId: string, options?: CallOptions): Promise<SecretDescription | undefined> {
    const { record } = await this.#read(secretId, options);
    if (record === undefined) return undefined;
    const versions = [...record.versions]
      .sort((a, b) => b.version - a.version)
      .map((v) => this.#versionInfo(secretId, v));
    return { ...this.#metadata(record), versions };
  }

  async deleteSecret(secretId: string, options?: CallOptions): Promise<boolean> {
    return this.#mutate(secretId, options, (current) =>
      current === undefined ? { result: false } : { write: null, result: true },
    );
  }

  /**
   * Disables a version (kept, but no longer served); disabling a disabled version is a no-op.
   * @throws SECRET_NOT_FOUND (secret or version), STORE_INVALID_REQUEST (version destroyed).
   */
  async disableVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretVersionInfo> {
    return this.#setState(secretId, version, 'DISABLED', options);
  }

  /**
   * Enables a disabled version again; enabling an enabled version is a no-op.
   * @throws SECRET_NOT_FOUND (secret or version), STORE_INVALID_REQUEST (version destroyed).
   */
  async enableVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretVersionInfo> {
    return this.#setState(secretId, version, 'ENABLED', options);
  }

  /**
   * Destroys a version's payload for good; its number stays used and it is listed as DESTROYED.
   * @throws SECRET_NOT_FOUND (secret or version), STORE_INVALID_REQUEST (already destroyed).
   */
  async destroyVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretVersionInfo> {
    return this.#setState(secretId, version, 'DESTROYED', options);
  }

  /** Later calls fail with STORE_FAILED. Safe to call twice; no locks or file handles stay open between calls. */
  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  async #setState(
    secretId: string,
    version: string,
    state: VersionRecord['state'],
    options?: CallOptions,
  ): Promise<SecretVersionInfo> {
    const number = parseVersion(version);
    return this.#mutate(secretId, options, (current) => {
      const record = this.#mustExist(secretId, current);
      const found = this.#findVersion(record, number);
      if (found.state === state && state !== 'DESTROYED')
        return { result: this.#versionInfo(secretId, found) };
      if (found.state === 'DESTROYED') {
        throw new PullSecretError(
          'STORE_INVALID_REQUEST',
          `version ${this.#versionPath(secretId, number)} is DESTROYED and cannot change state`,
        );
      }
      const changed: VersionRecord =
        state === 'DESTROYED'
          ? { version: found.version, state, createTime: found.createTime, destroyTime: now() }
          : { ...found, state };
      const versions = record.versions.map((v) => (v.version === number ? changed : v));
      return { write: { ...record, versions }, result: this.#versionInfo(secretId, changed) };
    });
  }

  /** Validates the id, honours the signal, and makes sure the store is set up. */
  #begin(secretId: string, options: CallOptions | undefined): Promise<ActiveKey> {
    assertSecretId(secretId);
    throwIfAborted(options?.signal);
    if (this.#closed) throw new PullSecretError('STORE_FAILED', 'local store is closed');
    return this.#files.open();
  }

  async #read(
    secretId: string,
    options: CallOptions | undefined,
  ): Promise<{ record: SecretRecord | undefined; active: ActiveKey }> {
    const active = await this.#begin(secretId, options);
    const record = await this.#files.read(secretId);
    // A version under a key this process has not loaded: a rotation started since; load the keys again.
    const unknown = record?.versions.some(
      (v) => v.keyId !== undefined && v.payload !== undefined && !active.keys.has(v.keyId),
    );
    return { record, active: unknown ? await this.#files.refreshKeys() : active };
  }

  async #mutate<T>(
    secretId: string,
    options: CallOptions | undefined,
    decide: (current: SecretRecord | undefined, active: ActiveKey) => Change<T>,
  ): Promise<T> {
    await this.#begin(secretId, options);
    return this.#files.mutate(secretId, options?.signal, decide);
  }

  #mustExist(secretId: string, record: SecretRecord | undefined): SecretRecord {
    if (record === undefined)
      throw new PullSecretError('SECRET_NOT_FOUND', `secret ${this.secretPath(secretId)} does not exist`);
    return record;
  }

  #findVersion(record: SecretRecord, number: number): VersionRecord {
    const found = record.versions.find((v) => v.version === number);
    if (found === undefined)
      throw new PullSecretError(
        'SECRET_NOT_FOUND',
        `version ${this.#versionPath(record.id, number)} does not exist`,
      );
    return found;
  }

  #payload(
    record: SecretRecord,
    version: VersionRecord,
    { key: currentKey, keyId: currentKeyId, keys }: ActiveKey,
  ): SecretPayload {
    const binding = { secretId: record.id, version: version.version };
    if (version.payload === undefined) {
      throw new PullSecretError(
        'STORE_CORRUPT',
        `local store: version ${this.#versionPath(record.id, version.version)} is ${version.state} but has no payload`,
      );
    }
    const key = (version.keyId === undefined ? undefined : keys.get(version.keyId)) ?? currentKey;
    const hint =
      version.keyId !== undefined && !keys.has(version.keyId)
        ? `it was encrypted with another store key (key id ${version.keyId}, current key id ` +
          `${currentKeyId}); check LOCAL_STORE_KEY / LOCAL_STORE_KEY_FILE`
        : undefined;
    const data = decryptPayload(key, binding, version.payload, hint);
    return { version: String(version.version), path: this.#versionPath(record.id, version.version), data };
  }

  #metadata(record: SecretRecord): SecretMetadata {
    return {
      name: record.id,
      path: this.secretPath(record.id),
      labels: { ...record.labels },
      createdTime: record.createTime,
      etag: record.etag,
    };
  }

  #versionInfo(secretId: string, version: VersionRecord): SecretVersionInfo {
    return {
      version: String(version.version),
      path: this.#versionPath(secretId, version.version),
      state: version.state,
      createdTime: version.createTime,
    };
  }

  #versionPath(secretId: string, number: number): string {
    return `${this.secretPath(secretId)}/versions/${number}`;
  }
}

function newestEnabled(record: SecretRecord): VersionRecord | undefined {
  return record.versions.filter((v) => v.state === 'ENABLED').sort((a, b) => b.version - a.version)[0];
}

function parseVersion(version: string): number {
  if (!VERSION_ID.test(version)) {
    throw new PullSecretError(
      'STORE_INVALID_REQUEST',
      `invalid version id ${quoteIdentifier(version)}: must be a positive integer like "3"`,
    );
  }
  return Number(version);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new PullSecretError('ABORTED', 'operation aborted', { cause: signal.reason });
}

function now(): string {
  return new Date().toISOString();
}

function newEtag(): string {
  return randomBytes(8).toString('hex');
}

/** A new ENABLED version holding `data`, encrypted with the active key. */
function newVersion(secretId: string, version: number, data: Buffer, active: ActiveKey): VersionRecord {
  return {
    version,
    state: 'ENABLED',
    createTime: now(),
    keyId: active.keyId,
    payload: encryptPayload(active.key, { secretId, version }, data),
  };
}

/** @throws PAYLOAD_TOO_LARGE beyond LOCAL_MAX_PAYLOAD_BYTES. */
function assertPayloadSize(data: Buffer): void {
  if (data.length > LOCAL_MAX_PAYLOAD_BYTES) {
    throw new PullSecretError(
      'PAYLOAD_TOO_LARGE',
      `payload is ${data.length} bytes; a secret version holds at most ${LOCAL_MAX_PAYLOAD_BYTES} bytes`,
    );
  }
}
