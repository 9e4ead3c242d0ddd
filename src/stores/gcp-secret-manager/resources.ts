import type { protos } from '@google-cloud/secret-manager';
import type { SecretMetadata, SecretVersionInfo } from '../store.js';

/**
 * Conversions from Secret Manager resources to the store contract's types. Paths are rebuilt from
 * our own project id: the service answers with the project *number* in names, which would make
 * `path` differ from `secretPath()` for the same secret.
 */

type ISecret = protos.google.cloud.secretmanager.v1.ISecret;
type ISecretVersion = protos.google.cloud.secretmanager.v1.ISecretVersion;
type ITimestamp = protos.google.protobuf.ITimestamp;
/** int64 fields arrive as a string, a number or a Long depending on the loader options. */
type Int64 = number | string | { toString(): string } | null | undefined;

/** Converts an int64 wire value to a number (callers use it for values below 2^53). */
export function int64ToNumber(value: Int64): number | undefined {
  if (value === null || value === undefined) return undefined;
  const n = typeof value === 'number' ? value : Number(value.toString());
  return Number.isFinite(n) ? n : undefined;
}

/** ISO 8601 time of a protobuf Timestamp; the epoch when the field is missing. */
function timestampToIso(ts: ITimestamp | null | undefined): string {
  const seconds = int64ToNumber(ts?.seconds) ?? 0;
  const millis = Math.floor((ts?.nanos ?? 0) / 1e6);
  return new Date(seconds * 1000 + millis).toISOString();
}

/** The last segment of a resource name: the secret id or the version number. */
export function lastSegment(name: string | null | undefined): string {
  const value = name ?? '';
  return value.slice(value.lastIndexOf('/') + 1);
}

/** Maps a version state; anything but ENABLED/DESTROYED counts as DISABLED (not accessible). */
function versionState(state: ISecretVersion['state']): SecretVersionInfo['state'] {
  // The loader may hand the enum over by name or by number (ENABLED = 1, DESTROYED = 3).
  const value: string | number | null | undefined = state;
  if (value === 'ENABLED' || value === 1) return 'ENABLED';
  if (value === 'DESTROYED' || value === 3) return 'DESTROYED';
  return 'DISABLED';
}

/** Store metadata of a Secret resource. */
export function toSecretMetadata(secretId: string, path: string, secret: ISecret): SecretMetadata {
  const metadata: SecretMetadata = {
    name: secretId,
    path,
    labels: { ...(secret.labels ?? {}) },
    createdTime: timestampToIso(secret.createTime),
  };
  if (secret.etag) metadata.etag = secret.etag;
  return metadata;
}

/**
 * Store info of a SecretVersion resource; `secretPath` is the path of its secret. A version
 * scheduled for destruction (a secret with `version_destroy_ttl`: DISABLED with a
 * `scheduledDestroyTime`) counts as DESTROYED: its destruction was asked for and the service
 * completes it, so retention and rollback treat it as final (an admin may still restore it in GCP).
 */
export function toVersionInfo(secretPath: string, version: ISecretVersion): SecretVersionInfo {
  const id = lastSegment(version.name);
  const state = versionState(version.state);
  return {
    version: id,
    path: `${secretPath}/versions/${id}`,
    state: state === 'DISABLED' && version.scheduledDestroyTime != null ? 'DESTROYED' : state,
    createdTime: timestampToIso(version.createTime),
  };
}
