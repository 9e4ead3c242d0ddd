/**
 * The GCP Secret Manager store: the `SecretStore` contract, one RPC per step; version state changes
 * in version-state.ts, the write intent's RPCs in intent-rpcs.ts, the IAM probe in iam-check.ts.
 */
import type { SecretManagerServiceClient, protos } from '@google-cloud/secret-manager';
import { PullSecretError } from '../../errors/index.js';
import { assertLabels, assertSecretId } from '../../pullsecret/identifiers.js';
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
import type { GcpStoreConfig } from './config.js';
import { crc32c } from './crc32c.js';
import { destroyTtlFields } from './destroy-ttl.js';
import { rotationFields } from './rotation.js';
import type { GcpMethod } from './errors.js';
import { int64ToNumber, lastSegment, toSecretMetadata, toVersionInfo } from './resources.js';
import { addUnderWriteIntent, newWriterId } from './write-intent.js';
import { testGcpIamPermissions } from './iam-check.js';
import { annotationRpcs } from './intent-rpcs.js';
import { changeVersionState, listVersionsPage, type VersionStateMethod } from './version-state.js';

type IAccessSecretVersionResponse = protos.google.cloud.secretmanager.v1.IAccessSecretVersionResponse;

/** Options of a GCP store call: the contract's signal, plus an optional deadline override. */
export interface GcpCallOptions extends CallOptions {
  /** Deadline of each RPC of this call in milliseconds; default `callTimeoutMs` of the config. */
  timeoutMs?: number;
}

/** Secret Manager's limit on one version's payload. */
export const GCP_MAX_PAYLOAD_BYTES = 65_536;

/** Versions asked for per ListSecretVersions page by `describe`. */
const PAGE_SIZE = 100;

/**
 * `SecretStore` on GCP Secret Manager, one RPC per step (so callers can count and retry them).
 * Every method validates the secret id first (IDENTIFIER_INVALID, no call made) and throws only
 * `PullSecretError`, classified by `classifyGcpError`.
 */
export class GcpSecretStore implements SecretStore {
  readonly kind = 'gcp';
  readonly maxPayloadBytes = GCP_MAX_PAYLOAD_BYTES;
  /** CreateSecret, then AddSecretVersion of the first payload. */
  readonly writesPerCreate = 2;
  readonly location: string;
  private closed = false;
  /** This client's id in write intents. */
  private readonly writer = newWriterId();
  /** Secrets this client is adding a version to (its intents are its own, so it must not race itself). */
  private readonly writing = new Set<string>();

  constructor(
    private readonly client: SecretManagerServiceClient,
    private readonly config: GcpStoreConfig,
  ) {
    this.location = `projects/${config.projectId}`;
  }

  secretPath(secretId: string): string {
    return `${this.location}/secrets/${secretId}`;
  }

  /** Reads metadata (GetSecret); `undefined` on NOT_FOUND. */
  async getSecret(secretId: string, options?: GcpCallOptions): Promise<SecretMetadata | undefined> {
    const name = this.checkedPath(secretId);
    const result = await callExpecting(
      this.target('GetSecret', name),
      this.callOptions(options),
      ['NOT_FOUND'],
      (o) => this.client.getSecret({ name }, o),
    );
    return result.ok ? toSecretMetadata(secretId, name, result.value[0]) : undefined;
  }

  /**
   * CreateSecret with automatic replication (under the customer-managed key `kmsKeyName` when
   * configured), the configured rotation and topics (rotation.ts), the delayed destruction
   * `versionDestroyTtl` (destroy-ttl.ts) and `labels`; `undefined` on ALREADY_EXISTS. With `payload`,
   * then `addVersion` on the new secret (`ifLatest: null`): Secret Manager has no create with a value.
   * When that add fails, the secret stays without a version: a retried create answers "exists" (one
   * more CreateSecret, a write) and the caller adds the version to it.
   */
  async createSecret(
    secretId: string,
    labels: Record<string, string>,
    options?: CreateSecretOptions & GcpCallOptions,
  ): Promise<CreatedSecret | undefined> {
    const name = this.checkedPath(secretId);
    assertLabels(labels);
    const data = options?.payload;
    if (data !== undefined) this.assertPayloadSize(data);
    const kmsKeyName = this.config.kmsKeyName;
    const automatic = kmsKeyName === undefined ? {} : { customerManagedEncryption: { kmsKeyName } };
    const request = {
      parent: this.location,
      secretId,
      secret: {
        replication: { automatic },
        labels,
        ...rotationFields(this.config),
        ...destroyTtlFields(this.config),
      },
    };
    const result = await callExpecting(
      this.target('CreateSecret', name),
      this.callOptions(options),
      ['ALREADY_EXISTS'],
      (o) => this.client.createSecret(request, o),
    );
    if (!result.ok) return undefined;
    const metadata = toSecretMetadata(secretId, name, result.value[0]);
    if (data === undefined) return metadata;
    const { payload: _payload, ...call } = options ?? {};
    return { ...metadata, version: await this.addVersion(secretId, data, { ...call, ifLatest: null }) };
  }

  /**
   * Accesses `versions/latest` (one RPC in the normal case). When the newest version is disabled or
   * destroyed (FAILED_PRECONDITION), lists the newest ENABLED version and accesses that. NOT_FOUND
   * on `latest` means "no secret" or "no versions"; one GetSecret tells them apart, unless
   * `skipExistenceCheck` spares it (SECRET_NOT_FOUND then stands for both).
   *
   * @throws SECRET_NOT_FOUND when the secret does not exist; STORE_CORRUPT on a checksum mismatch.
   */
  async accessLatestEnabled(
    secretId: string,
    options?: AccessLatestOptions & GcpCallOptions,
  ): Promise<SecretPayload | undefined> {
    const path = this.checkedPath(secretId);
    const name = `${path}/versions/latest`;
    const latest = await callExpecting(
      this.target('AccessSecretVersion', name),
      this.callOptions(options),
      ['NOT_FOUND', 'FAILED_PRECONDITION'],
      (o) => this.client.accessSecretVersion({ name }, o),
    );
    if (latest.ok) return this.toPayload(path, latest.value[0]);
    if (latest.code === 'NOT_FOUND') {
      if (options?.skipExistenceCheck === true)
        throw new PullSecretError(
          'SECRET_NOT_FOUND',
          `GCP Secret Manager secret ${path} does not exist or has no version yet`,
        );
      if ((await this.getSecret(secretId, options)) === undefined) throw this.notFound(path);
      return undefined;
    }
    // The list is newest first, so one entry is the newest enabled version.
    const page = await listVersionsPage(
      this.client,
      path,
      { pageSize: 1, filter: 'state:ENABLED' },
      this.callOptions(options),
    );
    if (page.missing) throw this.notFound(path);
    const newest = page.versions[0];
    return newest === undefined ? undefined : this.accessNumbered(path, newest.version, options);
  }

  /** Accesses one version. @throws SECRET_NOT_FOUND, VERSION_NOT_ENABLED, STORE_CORRUPT. */
  async accessVersion(secretId: string, version: string, options?: GcpCallOptions): Promise<SecretPayload> {
    const path = this.checkedPath(secretId);
    if (!/^([1-9][0-9]{0,18}|latest)$/.test(version)) {
      throw new PullSecretError(
        'IDENTIFIER_INVALID',
        'invalid secret version: must be a positive version number or "latest"',
      );
    }
    return this.accessNumbered(path, version, options);
  }

  /**
   * AddSecretVersion with the payload's CRC-32C, so the service rejects bytes damaged on the way.
   *
   * `ifLatest` (compare-and-add): Secret Manager cannot add a version conditionally. With
   * `writeIntent` configured, the add runs under the write intent (write-intent.ts: GetSecret,
   * UpdateSecret with the etag, a re-read of the newest version, the add, UpdateSecret again), which
   * holds the precondition among every writer that uses it. Without it the precondition is not
   * checked here: the caller's read just before is all there is (docs/architecture.md).
   *
   * @throws PAYLOAD_TOO_LARGE (before any call), SECRET_NOT_FOUND, STORE_PRECONDITION_FAILED.
   */
  async addVersion(
    secretId: string,
    data: Buffer,
    options?: AddVersionOptions & GcpCallOptions,
  ): Promise<SecretVersionInfo> {
    const path = this.checkedPath(secretId);
    this.assertPayloadSize(data);
    const request = { parent: path, payload: { data, dataCrc32c: crc32c(data) } };
    const add = async (): Promise<SecretVersionInfo> => {
      const [version] = await call(this.target('AddSecretVersion', path), this.callOptions(options), (o) =>
        this.client.addSecretVersion(request, o),
      );
      return toVersionInfo(path, version);
    };
    if (options?.ifLatest === undefined || this.config.writeIntent !== true) return add();
    if (this.writing.has(path))
      throw new PullSecretError(
        'STORE_PRECONDITION_FAILED',
        `GCP Secret Manager secret ${path}: this client is adding a version already; re-reading`,
      );
    this.writing.add(path);
    try {
      return await addUnderWriteIntent(
        {
          ...annotationRpcs(this.client, path, (detached) =>
            this.callOptions(detached ? { ...options, signal: undefined } : options),
          ),
          newestEnabledVersion: async () =>
            (await this.accessLatestEnabled(secretId, options))?.version ?? null,
          add,
        },
        {
          path,
          writer: this.writer,
          ifLatest: options.ifLatest,
          callTimeoutMs: options.timeoutMs ?? this.config.callTimeoutMs,
        },
      );
    } finally {
      this.writing.delete(path);
    }
  }

  /** GetSecret plus every ListSecretVersions page (newest first); `undefined` when the secret is gone. */
  async describe(secretId: string, options?: GcpCallOptions): Promise<SecretDescription | undefined> {
    const metadata = await this.getSecret(secretId, options);
    if (metadata === undefined) return undefined;
    const versions: SecretVersionInfo[] = [];
    let pageToken: string | undefined;
    do {
      const page = await listVersionsPage(
        this.client,
        metadata.path,
        { pageSize: PAGE_SIZE, pageToken },
        this.callOptions(options),
      );
      if (page.missing) return undefined;
      versions.push(...page.versions);
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined);
    return { ...metadata, versions };
  }

  /**
   * DisableSecretVersion (the version stays, no longer served).
   * @throws SECRET_NOT_FOUND, STORE_INVALID_REQUEST (destroyed).
   */
  disableVersion(secretId: string, version: string, options?: GcpCallOptions): Promise<SecretVersionInfo> {
    return this.changeVersion('DisableSecretVersion', secretId, version, options);
  }

  /** EnableSecretVersion. @throws SECRET_NOT_FOUND, STORE_INVALID_REQUEST (destroyed). */
  enableVersion(secretId: string, version: string, options?: GcpCallOptions): Promise<SecretVersionInfo> {
    return this.changeVersion('EnableSecretVersion', secretId, version, options);
  }

  /**
   * DestroySecretVersion: the payload is wiped (or, on a secret created with `version_destroy_ttl`,
   * the service keeps it DISABLED until the TTL passes, then wipes it). @throws SECRET_NOT_FOUND,
   * STORE_INVALID_REQUEST (already destroyed).
   */
  destroyVersion(secretId: string, version: string, options?: GcpCallOptions): Promise<SecretVersionInfo> {
    return this.changeVersion('DestroySecretVersion', secretId, version, options);
  }

  /** DeleteSecret; false on NOT_FOUND. */
  async deleteSecret(secretId: string, options?: GcpCallOptions): Promise<boolean> {
    const name = this.checkedPath(secretId);
    const result = await callExpecting(
      this.target('DeleteSecret', name),
      this.callOptions(options),
      ['NOT_FOUND'],
      (o) => this.client.deleteSecret({ name }, o),
    );
    return result.ok;
  }

  /**
   * TestIamPermissions on the secret `secretId`: which of `permissions` the caller holds there,
   * grants inherited from the project included. Needs no permission of its own. Secret Manager
   * answers an empty set for a secret that does not exist, so an empty answer alone proves nothing.
   *
   * @throws IDENTIFIER_INVALID (no call made); STORE_PERMISSION_DENIED when the call itself is
   *   refused (Secret Manager API disabled, or no such project); otherwise the classified error.
   */
  async testIamPermissions(
    permissions: readonly string[],
    options: GcpCallOptions & { secretId: string },
  ): Promise<string[]> {
    return testGcpIamPermissions(
      this.client,
      this.checkedPath(options.secretId),
      permissions,
      this.callOptions(options),
    );
  }

  /** Closes the gRPC channel. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close();
  }

  /** One version state change (version-state.ts), after the secret id is checked. */
  private async changeVersion(
    method: VersionStateMethod,
    secretId: string,
    version: string,
    options: GcpCallOptions | undefined,
  ): Promise<SecretVersionInfo> {
    const path = this.checkedPath(secretId);
    return changeVersionState(this.client, method, path, version, this.callOptions(options));
  }

  private async accessNumbered(
    secretPath: string,
    version: string,
    options: GcpCallOptions | undefined,
  ): Promise<SecretPayload> {
    const name = `${secretPath}/versions/${version}`;
    const [response] = await call(this.target('AccessSecretVersion', name), this.callOptions(options), (o) =>
      this.client.accessSecretVersion({ name }, o),
    );
    return this.toPayload(secretPath, response);
  }

  private toPayload(secretPath: string, response: IAccessSecretVersionResponse): SecretPayload {
    const version = lastSegment(response.name);
    const data = Buffer.from(response.payload?.data ?? new Uint8Array());
    const expected = int64ToNumber(response.payload?.dataCrc32c);
    // Verifies the bytes end to end when the service sends a checksum (it does for every version).
    if (expected !== undefined && expected !== crc32c(data)) {
      throw new PullSecretError(
        'STORE_CORRUPT',
        `GCP Secret Manager returned ${secretPath}/versions/${version} with a CRC-32C mismatch`,
      );
    }
    return { version, path: `${secretPath}/versions/${version}`, data };
  }

  /** @throws PAYLOAD_TOO_LARGE beyond Secret Manager's 64 KiB per version. */
  private assertPayloadSize(data: Buffer): void {
    if (data.length > this.maxPayloadBytes) {
      throw new PullSecretError(
        'PAYLOAD_TOO_LARGE',
        `pull secret is ${data.length} bytes; ` +
          `GCP Secret Manager holds at most ${this.maxPayloadBytes} bytes per version`,
      );
    }
  }

  private checkedPath(secretId: string): string {
    if (this.closed) throw new PullSecretError('STORE_FAILED', 'the GCP Secret Manager store is closed');
    assertSecretId(secretId);
    return this.secretPath(secretId);
  }

  private notFound(path: string): PullSecretError {
    return new PullSecretError(
      'SECRET_NOT_FOUND',
      `GCP Secret Manager secret ${path} does not exist; check GCP_PROJECT_ID and the secret name.`,
    );
  }

  private target(method: GcpMethod, resource: string) {
    return { method, resource };
  }

  private callOptions(options: GcpCallOptions | undefined): ApiCallOptions {
    return {
      signal: options?.signal,
      timeoutMs: options?.timeoutMs ?? this.config.callTimeoutMs,
      onApiCall: this.config.onApiCall,
    };
  }
}
