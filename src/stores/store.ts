/**
 * The secret store contract (docs/architecture.md, "Stores"). Every store (local, GCP Secret Manager,
 * AWS Secrets Manager, Azure Key Vault) implements `SecretStore`; nothing outside a store's folder
 * imports its SDK.
 *
 * Errors: every method throws only `PullSecretError`, with the SDK error classified at the edge
 * (retryable: UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, INTERNAL, socket errors; permanent:
 * invalid input, permission denied, unmanaged target). Methods do not retry; the caller does.
 */

/** What a push did: like controller-runtime's OperationResult. */
export type PushOutcome = 'created' | 'updated' | 'unchanged';

/** Options every store call takes. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Options of `createSecret`. */
export interface CreateSecretOptions extends CallOptions {
  /**
   * The first version's bytes, stored together with the secret (what a push does): no moment exists
   * when the secret is there without its content. Absent: a secret with no version at all.
   */
  payload?: Buffer;
}

/** What `createSecret` made: the secret's metadata, and its first version when a payload was given. */
export interface CreatedSecret extends SecretMetadata {
  version?: SecretVersionInfo;
}

/** Options of `addVersion`. */
export interface AddVersionOptions extends CallOptions {
  /** Version id the caller read as the newest ENABLED one; `null` when it saw none. */
  ifLatest?: string | null;
}

/** Options of `accessLatestEnabled`. */
export interface AccessLatestOptions extends CallOptions {
  /**
   * Skip the store's check that a secret without an answer exists: SECRET_NOT_FOUND may then also
   * mean "the secret exists but has no version at all" (GCP answers NOT_FOUND to `latest` in both
   * cases, and telling them apart costs a GetSecret). For a caller whose next step settles it anyway.
   */
  skipExistenceCheck?: boolean;
}

/** Metadata of a stored secret. Never includes payload bytes. */
export interface SecretMetadata {
  /** The secret id, e.g. `hyperfleet-{cluster}-pull-secret`. */
  name: string;
  /** The store's full resource path, e.g. `projects/p/secrets/name`. */
  path: string;
  labels: Record<string, string>;
  /** ISO 8601 time the secret was created. */
  createdTime: string;
  /** Opaque token that changes on every metadata change (GCP etag); used for optimistic concurrency. */
  etag?: string;
}

/** One secret version. */
export interface SecretVersionInfo {
  /** Version id within the secret: "1", "2", ... */
  version: string;
  /** Full resource path of the version, e.g. `projects/p/secrets/name/versions/2`. */
  path: string;
  state: 'ENABLED' | 'DISABLED' | 'DESTROYED';
  createdTime: string;
}

/** Metadata plus the version list, newest first. */
export interface SecretDescription extends SecretMetadata {
  versions: SecretVersionInfo[];
}

/** A version with its payload. */
export interface SecretPayload {
  version: string;
  path: string;
  data: Buffer;
  /**
   * The secret's full name as the store answered it, where it differs from `secretPath(id)` (AWS: the
   * ARN with its suffix).
   */
  secretPath?: string;
}

/**
 * The narrow store client. Each method is one store round trip (or a local equivalent), so callers
 * can count and retry them step by step.
 */
export interface SecretStore {
  /** Store kind, e.g. `local` or `gcp`. */
  readonly kind: string;
  /** Largest payload one version may hold, in bytes (GCP: 64 KiB). */
  readonly maxPayloadBytes: number;
  /** Where secrets live, for logs and status (`projects/p`, or the local directory). */
  readonly location: string;
  /** Writes a `createSecret` holding a payload makes at the store when more than one (GCP: 2); pacing counts them. */
  readonly writesPerCreate?: number;

  /** Resource path of a secret id in this store. */
  secretPath(secretId: string): string;

  /** Reads metadata; `undefined` when the secret does not exist. */
  getSecret(secretId: string, options?: CallOptions): Promise<SecretMetadata | undefined>;

  /**
   * Creates the secret with the given labels (automatic replication where the store has a choice),
   * holding `options.payload` as its first version (PAYLOAD_TOO_LARGE before any call), or no version
   * without one. One write where the store's API allows it (Key Vault SetSecret, AWS CreateSecret with
   * the value, the local store's one record); GCP needs CreateSecret then AddSecretVersion. Returns
   * `undefined` when it already exists (a concurrent creator won the race): nothing is written to it,
   * and the caller reads it with `getSecret`.
   */
  createSecret(
    secretId: string,
    labels: Record<string, string>,
    options?: CreateSecretOptions,
  ): Promise<CreatedSecret | undefined>;

  /**
   * Reads the newest ENABLED version's payload. `undefined` when the secret has no enabled version.
   * Throws SECRET_NOT_FOUND when the secret itself does not exist (see `skipExistenceCheck`).
   */
  accessLatestEnabled(secretId: string, options?: AccessLatestOptions): Promise<SecretPayload | undefined>;

  /** Reads one version's payload. Throws SECRET_NOT_FOUND or VERSION_NOT_ENABLED. */
  accessVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretPayload>;

  /**
   * Adds a version holding exactly `data`. With `ifLatest`, a compare-and-add: the version is added
   * only while the newest ENABLED version is still `ifLatest` (`null`: no enabled version), else
   * STORE_PRECONDITION_FAILED (retryable: re-read, decide again). How strictly a store can hold that
   * precondition against writers it does not know is the store's to document (local: exactly, under
   * its lock; AWS: exactly, by its staging labels; GCP: with the write intent; Azure: re-read just
   * before the write; docs/architecture.md, "Concurrency: one version per change").
   * Throws PAYLOAD_TOO_LARGE, SECRET_NOT_FOUND, STORE_PRECONDITION_FAILED.
   */
  addVersion(secretId: string, data: Buffer, options?: AddVersionOptions): Promise<SecretVersionInfo>;

  /** Metadata plus every version (newest first); `undefined` when the secret does not exist. */
  describe(secretId: string, options?: CallOptions): Promise<SecretDescription | undefined>;

  /**
   * Version lifecycle (optional: a store without it is simply not retired or rolled back from a
   * disabled version; see docs/retention.md). Listing is `describe` (metadata, so ownership labels,
   * plus every version with its state and create time, newest first).
   *
   * `disableVersion`: the version is kept but no longer served (GCP DisableSecretVersion; Azure:
   * version attributes enabled=false; AWS: AWSPREVIOUS removed). Disabling a disabled version is a
   * no-op. A store may return the version still ENABLED when something not ours keeps it served
   * (AWS: another staging label); the caller then counts it as kept.
   * `enableVersion`: the reverse (GCP EnableSecretVersion), used by a rollback to a disabled version.
   * `destroyVersion`: the payload is gone for good; the version stays listed as DESTROYED and its
   * number is never reused (GCP DestroySecretVersion).
   *
   * Each is one write against the store's write quota.
   * @throws SECRET_NOT_FOUND (secret or version), STORE_INVALID_REQUEST (the version is destroyed),
   *   or the store's classified errors.
   */
  disableVersion?(secretId: string, version: string, options?: CallOptions): Promise<SecretVersionInfo>;
  /** See `disableVersion`. */
  enableVersion?(secretId: string, version: string, options?: CallOptions): Promise<SecretVersionInfo>;
  /** See `disableVersion`. */
  destroyVersion?(secretId: string, version: string, options?: CallOptions): Promise<SecretVersionInfo>;

  /** Deletes the secret and all versions. Returns false when it did not exist. */
  deleteSecret(secretId: string, options?: CallOptions): Promise<boolean>;

  /** Releases connections and handles. Safe to call twice. */
  close(): Promise<void>;
}
