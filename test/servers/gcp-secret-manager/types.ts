import type { status } from '@grpc/grpc-js';

/** The Secret Manager RPCs the test server implements. */
export const METHOD_NAMES = [
  'ListSecrets',
  'CreateSecret',
  'GetSecret',
  'UpdateSecret',
  'DeleteSecret',
  'AddSecretVersion',
  'GetSecretVersion',
  'AccessSecretVersion',
  'ListSecretVersions',
  'EnableSecretVersion',
  'DisableSecretVersion',
  'DestroySecretVersion',
  'TestIamPermissions',
] as const;

export type MethodName = (typeof METHOD_NAMES)[number];

export type VersionState = 'ENABLED' | 'DISABLED' | 'DESTROYED';

/** An error the server answers with: a real gRPC status code and the service's style of message. */
export class RpcError extends Error {
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/** google.protobuf.Timestamp as the loader hands it over (int64 as a string). */
export interface WireTimestamp {
  seconds: string;
  nanos: number;
}

/** google.cloud.secretmanager.v1.Replication, with the loader's virtual oneof field. */
export interface WireReplication {
  automatic?: { customerManagedEncryption?: { kmsKeyName?: string } | null };
  userManaged?: { replicas?: { location?: string }[] };
  replication?: string;
}

/** google.cloud.secretmanager.v1.Secret (the fields the server keeps). */
export interface WireSecret {
  name?: string;
  replication?: WireReplication;
  createTime?: WireTimestamp;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  etag?: string;
  /** google.cloud.secretmanager.v1.Rotation. */
  rotation?: WireRotation | null;
  /** google.cloud.secretmanager.v1.Topic list. */
  topics?: { name?: string }[];
  /** Delayed destruction of the secret's versions. */
  versionDestroyTtl?: WireDuration | null;
}

/** google.protobuf.Duration as the loader hands it over. */
export interface WireDuration {
  seconds?: string | number;
  nanos?: number;
}

/** google.cloud.secretmanager.v1.Rotation. */
export interface WireRotation {
  nextRotationTime?: { seconds?: string | number; nanos?: number } | null;
  rotationPeriod?: WireDuration | null;
}

/** google.cloud.secretmanager.v1.SecretPayload. */
export interface WirePayload {
  data?: Buffer;
  /** `optional int64`: absent when the client did not send it. */
  dataCrc32c?: string | number | null;
}

/** Converts a Date to a protobuf Timestamp. */
export function toTimestamp(date: Date): WireTimestamp {
  const ms = date.getTime();
  return { seconds: String(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 };
}
