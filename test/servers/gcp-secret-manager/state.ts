import { randomBytes } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { crc32c } from '../../../src/stores/gcp-secret-manager/crc32c.js';
import { canonicalName, projectNumberOf, secretName, type SecretRef, type VersionRef } from './names.js';
import { assertAnnotationsRule, assertLabelsRule } from './rules.js';
import { RpcError, type VersionState, type WireReplication } from './types.js';

/**
 * The in-memory model of Secret Manager: secrets with labels and an etag, versions numbered
 * 1, 2, 3... with their state machine (ENABLED ⇄ DISABLED → DESTROYED, destroyed is final).
 * Methods throw `RpcError` with the real service's codes; tests may also call them directly to
 * seed or inspect state without going through gRPC.
 */

export interface StoredVersion {
  number: number;
  state: VersionState;
  /** Wiped when the version is destroyed. */
  data: Buffer | undefined;
  crc32c: number;
  clientChecksum: boolean;
  createTime: Date;
  destroyTime?: Date;
  /** Set when destroyed on a secret with `versionDestroyTtlSeconds`: the version is DISABLED until then. */
  scheduledDestroyTime?: Date;
  etag: string;
}

export interface StoredSecret {
  /** The project number (names carry it: names.ts). */
  project: string;
  secretId: string;
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  replication: WireReplication;
  createTime: Date;
  etag: string;
  /** Oldest first; `latest` is the last one. */
  versions: StoredVersion[];
  /** Rotation policy, when set at creation (period in seconds). */
  rotation?: { rotationPeriodSeconds?: number; nextRotationTime?: Date };
  /** Pub/Sub topics the secret's changes are published to. */
  topics?: string[];
  /** Delayed destruction (`version_destroy_ttl`), in seconds. */
  versionDestroyTtlSeconds?: number;
}

/** What a test may seed: labels, and versions (oldest first) in any state. */
export interface SeedSecret {
  labels?: Record<string, string>;
  versions?: { data: Buffer | string; state?: VersionState }[];
  project?: string;
}

/** A fresh etag, quoted like the service's. */
function newEtag(): string {
  return `"${randomBytes(7).toString('hex')}"`;
}

function notFound(message: string): RpcError {
  return new RpcError(status.NOT_FOUND, message);
}

export class SecretManagerState {
  private readonly secrets = new Map<string, StoredSecret>();

  /** @param defaultProject project used by the seeding helpers when none is given. */
  constructor(readonly defaultProject: string) {}

  /** Creates a secret. @throws ALREADY_EXISTS, INVALID_ARGUMENT (labels). */
  createSecret(
    ref: SecretRef,
    labels: Record<string, string>,
    replication: WireReplication,
    annotations: Record<string, string> = {},
    notify: Pick<StoredSecret, 'rotation' | 'topics' | 'versionDestroyTtlSeconds'> = {},
  ): StoredSecret {
    assertLabelsRule(labels);
    assertAnnotationsRule(annotations);
    const name = canonicalName(ref.name);
    // ALREADY_EXISTS (HTTP 409) for an id in use (AIP-133; the live service's 409 ALREADY_EXISTS:
    // https://github.com/ansible-collections/google.cloud/issues/768).
    if (this.secrets.has(name)) throw new RpcError(status.ALREADY_EXISTS, `Secret [${name}] already exists.`);
    const secret: StoredSecret = {
      project: projectNumberOf(ref.project),
      secretId: ref.secretId,
      name,
      labels: { ...labels },
      annotations: { ...annotations },
      replication,
      createTime: new Date(),
      etag: newEtag(),
      versions: [],
      ...(notify.rotation === undefined ? {} : { rotation: { ...notify.rotation } }),
      ...(notify.topics === undefined || notify.topics.length === 0 ? {} : { topics: [...notify.topics] }),
      ...(notify.versionDestroyTtlSeconds === undefined
        ? {}
        : { versionDestroyTtlSeconds: notify.versionDestroyTtlSeconds }),
    };
    this.secrets.set(name, secret);
    return secret;
  }

  /** @throws NOT_FOUND. */
  getSecret(ref: SecretRef): StoredSecret {
    const name = canonicalName(ref.name);
    const secret = this.secrets.get(name);
    if (secret === undefined) throw notFound(`Secret [${name}] not found.`);
    return secret;
  }

  /** Secrets of a project (id or number), in creation order. */
  listSecrets(project: string): StoredSecret[] {
    const number = projectNumberOf(project);
    return [...this.secrets.values()].filter((s) => s.project === number);
  }

  /** Replaces labels and/or annotations; a new etag. @throws NOT_FOUND, FAILED_PRECONDITION (etag), INVALID_ARGUMENT. */
  updateSecret(
    ref: SecretRef,
    changes: { labels?: Record<string, string>; annotations?: Record<string, string> },
    etag: string | undefined,
  ): StoredSecret {
    const secret = this.getSecret(ref);
    this.checkEtag(secret.etag, etag, ref.name);
    if (changes.labels !== undefined) assertLabelsRule(changes.labels);
    if (changes.annotations !== undefined) assertAnnotationsRule(changes.annotations);
    if (changes.labels !== undefined) secret.labels = { ...changes.labels };
    if (changes.annotations !== undefined) secret.annotations = { ...changes.annotations };
    secret.etag = newEtag();
    return secret;
  }

  /** Deletes a secret and its versions. @throws NOT_FOUND, FAILED_PRECONDITION (etag). */
  deleteSecret(ref: SecretRef, etag: string | undefined): void {
    const secret = this.getSecret(ref);
    this.checkEtag(secret.etag, etag, ref.name);
    this.secrets.delete(secret.name);
  }

  /** Adds an ENABLED version numbered one past the newest. @throws NOT_FOUND. */
  addVersion(ref: SecretRef, data: Buffer, clientChecksum: boolean): StoredVersion {
    const secret = this.getSecret(ref);
    const version: StoredVersion = {
      number: (secret.versions.at(-1)?.number ?? 0) + 1,
      state: 'ENABLED',
      data: Buffer.from(data),
      crc32c: crc32c(data),
      clientChecksum,
      createTime: new Date(),
      etag: newEtag(),
    };
    secret.versions.push(version);
    return version;
  }

  /**
   * Resolves a version; `latest` is the most recently created version whatever its state (API
   * reference: "an alias to the most recently created SecretVersion"; the live service answering
   * `versions/latest` with version 4 DESTROYED while 3 is ENABLED:
   * https://github.com/google-github-actions/get-secretmanager-secrets/issues/268).
   * @throws NOT_FOUND (for `latest`: "not found or has no versions", as the service says).
   */
  getVersion(ref: VersionRef): { secret: StoredSecret; version: StoredVersion } {
    const name = canonicalName(ref.name);
    const secret = this.secrets.get(name);
    if (ref.version === 'latest') {
      const latest = secret?.versions.at(-1);
      if (secret === undefined || latest === undefined)
        throw notFound(`Secret [${name}] not found or has no versions.`);
      return { secret, version: latest };
    }
    const version = secret?.versions.find((v) => v.number === ref.version);
    if (secret === undefined || version === undefined)
      throw notFound(`Secret Version [${name}/versions/${ref.version}] not found.`);
    return { secret, version };
  }

  /**
   * The payload of an ENABLED version. A missing secret or version is NOT_FOUND; a DISABLED or
   * DESTROYED one is FAILED_PRECONDITION "Secret Version [...] is in DISABLED state." (the live
   * service's answers: https://github.com/external-secrets/external-secrets/issues/4042).
   * @throws NOT_FOUND, FAILED_PRECONDITION.
   */
  accessVersion(ref: VersionRef): { secret: StoredSecret; version: StoredVersion; data: Buffer } {
    const { secret, version } = this.getVersion(ref);
    if (version.state !== 'ENABLED' || version.data === undefined) {
      throw new RpcError(
        status.FAILED_PRECONDITION,
        `Secret Version [${secret.name}/versions/${version.number}] is in ${version.state} state.`,
      );
    }
    return { secret, version, data: version.data };
  }

  /**
   * Moves a version to `target`. Destroyed versions cannot change (FAILED_PRECONDITION); destroying
   * wipes the payload, or, on a secret with `version_destroy_ttl`, disables the version and sets its
   * `scheduledDestroyTime` (payload kept; this server never runs the scheduled wipe itself).
   * A request that changes nothing still renews the version's etag (https://cloud.google.com/secret-manager/docs/etags).
   * @throws NOT_FOUND, FAILED_PRECONDITION (destroyed, or a stale etag).
   */
  setVersionState(ref: VersionRef, target: VersionState, etag?: string): StoredVersion {
    const { secret, version } = this.getVersion(ref);
    this.checkEtag(version.etag, etag, `${secret.name}/versions/${version.number}`);
    if (version.state === 'DESTROYED') {
      throw new RpcError(
        status.FAILED_PRECONDITION,
        `Secret Version [${secret.name}/versions/${version.number}] is in DESTROYED state.`,
      );
    }
    if (version.scheduledDestroyTime !== undefined) {
      // Delayed destruction: destroying again changes nothing; enabling or disabling cancels the schedule.
      if (target === 'DESTROYED') return version;
      delete version.scheduledDestroyTime;
      version.state = target;
      version.etag = newEtag();
      return version;
    }
    if (version.state === target) {
      version.etag = newEtag();
      return version;
    }
    if (target === 'DESTROYED' && secret.versionDestroyTtlSeconds !== undefined) {
      version.state = 'DISABLED';
      version.scheduledDestroyTime = new Date(Date.now() + secret.versionDestroyTtlSeconds * 1000);
      version.etag = newEtag();
      return version;
    }
    version.state = target;
    version.etag = newEtag();
    if (target === 'DESTROYED') {
      version.data = undefined;
      version.destroyTime = new Date();
    }
    return version;
  }

  /** Versions newest first, optionally only those in `state`. @throws NOT_FOUND. */
  listVersions(ref: SecretRef, state?: VersionState): StoredVersion[] {
    const versions = [...this.getSecret(ref).versions].reverse();
    return state === undefined ? versions : versions.filter((v) => v.state === state);
  }

  /** Seeds a secret with labels and versions in any state (for tests). @throws like the RPCs. */
  seedSecret(secretId: string, seed: SeedSecret = {}): StoredSecret {
    const project = seed.project ?? this.defaultProject;
    const ref = { project: projectNumberOf(project), secretId, name: secretName(project, secretId) };
    const secret = this.createSecret(ref, seed.labels ?? {}, { automatic: {} });
    for (const v of seed.versions ?? []) {
      const data = Buffer.from(v.data);
      const version = this.addVersion(ref, data, false);
      if (v.state !== undefined && v.state !== 'ENABLED')
        this.setVersionState({ ...ref, version: version.number }, v.state);
    }
    return secret;
  }

  /** A secret by id, or `undefined` (for assertions). */
  findSecret(secretId: string, project = this.defaultProject): StoredSecret | undefined {
    return this.secrets.get(secretName(project, secretId));
  }

  /** A secret by its full name `projects/P/secrets/S` (P an id or a number), or `undefined`. */
  lookup(name: string): StoredSecret | undefined {
    return this.secrets.get(canonicalName(name));
  }

  /** A secret's versions newest first, by id (for assertions). @throws NOT_FOUND. */
  versionsOf(secretId: string, project = this.defaultProject): StoredVersion[] {
    return this.listVersions({
      project: projectNumberOf(project),
      secretId,
      name: secretName(project, secretId),
    });
  }

  /** Sets a version's state by id and number (for tests). */
  setState(
    secretId: string,
    version: number,
    state: VersionState,
    project = this.defaultProject,
  ): StoredVersion {
    return this.setVersionState(
      { project: projectNumberOf(project), secretId, name: secretName(project, secretId), version },
      state,
    );
  }

  /** Removes every secret. */
  clear(): void {
    this.secrets.clear();
  }

  private checkEtag(current: string, given: string | undefined, name: string): void {
    // Secret Manager answers a stale etag with FAILED_PRECONDITION (HTTP 400), not AIP-154's ABORTED;
    // no etag means no check: https://cloud.google.com/secret-manager/docs/etags
    if (given !== undefined && given !== '' && given !== current) {
      throw new RpcError(
        status.FAILED_PRECONDITION,
        `The etag provided for [${name}] does not match the current etag of the resource.`,
      );
    }
  }
}
