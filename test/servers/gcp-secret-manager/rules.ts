import { status } from '@grpc/grpc-js';
import { crc32c } from '../../../src/stores/gcp-secret-manager/crc32c.js';
import { RpcError, type WirePayload, type WireReplication, type WireSecret } from './types.js';

/** Secret Manager's content rules: labels, replication, payload size and checksum. */

/** Largest payload of one version. */
export const MAX_PAYLOAD_BYTES = 65_536;
/** Most labels one secret may carry. */
export const MAX_LABELS = 64;

const LABEL_KEY = /^[a-z][a-z0-9_-]{0,62}$/;
const LABEL_VALUE = /^[a-z0-9_-]{0,63}$/;

/** Validates labels. @throws INVALID_ARGUMENT naming the offending key or value. */
export function assertLabelsRule(labels: Readonly<Record<string, string>>): void {
  const entries = Object.entries(labels);
  if (entries.length > MAX_LABELS) {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `A Secret can have at most ${MAX_LABELS} labels; the request has ${entries.length}.`,
    );
  }
  for (const [key, value] of entries) {
    if (!LABEL_KEY.test(key)) {
      throw new RpcError(
        status.INVALID_ARGUMENT,
        `Label key [${key}] is invalid: keys must start with a lowercase letter and contain at most 63 lowercase letters, numbers, underscores or dashes.`,
      );
    }
    if (!LABEL_VALUE.test(value)) {
      throw new RpcError(
        status.INVALID_ARGUMENT,
        `Label value [${value}] of key [${key}] is invalid: values can contain at most 63 lowercase letters, numbers, underscores or dashes.`,
      );
    }
  }
}

const ANNOTATION_KEY = /^[a-zA-Z0-9](?:[a-zA-Z0-9._-]{0,61}[a-zA-Z0-9])?$/;
/** Limit on the total size of annotation keys and values. */
export const MAX_ANNOTATIONS_BYTES = 16 * 1024;

/**
 * Validates annotations as the service does: keys of 1-63 characters, alphanumeric at both ends,
 * dashes, underscores and dots between (no `/`); keys and values together under 16 KiB.
 * @throws INVALID_ARGUMENT.
 */
export function assertAnnotationsRule(annotations: Readonly<Record<string, string>>): void {
  let size = 0;
  for (const [key, value] of Object.entries(annotations)) {
    if (!ANNOTATION_KEY.test(key)) {
      throw new RpcError(
        status.INVALID_ARGUMENT,
        `Annotation key [${key}] is invalid: keys must be 1-63 characters, begin and end with an alphanumeric character, and contain only alphanumerics, dashes, underscores or dots.`,
      );
    }
    size += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (size >= MAX_ANNOTATIONS_BYTES) {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `The total size of annotation keys and values must be less than ${MAX_ANNOTATIONS_BYTES} bytes.`,
    );
  }
}

/** A Cloud KMS crypto key name. */
const KMS_KEY = /^projects\/[^/]+\/locations\/([^/]+)\/keyRings\/[^/]+\/cryptoKeys\/[^/]+$/;

/**
 * Validates a replication policy: required, automatic or user-managed with at least one replica;
 * an automatic policy's customer-managed key must be a crypto key name in `global`.
 */
export function assertReplicationRule(replication: WireReplication | undefined): void {
  if (replication?.automatic !== undefined) {
    const cmek = replication.automatic.customerManagedEncryption;
    if (!cmek) return;
    const match = KMS_KEY.exec(cmek.kmsKeyName ?? '');
    if (match === null)
      throw new RpcError(
        status.INVALID_ARGUMENT,
        'Secret.replication.automatic.customer_managed_encryption.kms_key_name must be a Cloud KMS crypto key name.',
      );
    if (match[1] !== 'global')
      throw new RpcError(
        status.INVALID_ARGUMENT,
        'Secret.replication.automatic.customer_managed_encryption.kms_key_name must be in the global location.',
      );
    return;
  }
  const replicas = replication?.userManaged?.replicas ?? [];
  if (replication?.userManaged !== undefined) {
    if (replicas.length === 0 || replicas.some((r) => !r.location)) {
      throw new RpcError(
        status.INVALID_ARGUMENT,
        'Secret.replication.user_managed.replicas must name at least one location.',
      );
    }
    return;
  }
  throw new RpcError(
    status.INVALID_ARGUMENT,
    'Secret.replication is required: set automatic or user_managed replication.',
  );
}

/**
 * Validates a payload and returns its bytes and CRC-32C.
 * @throws INVALID_ARGUMENT when missing, larger than 64 KiB, or when `data_crc32c` does not match.
 */
export function checkPayload(payload: WirePayload | undefined): {
  data: Buffer;
  crc: number;
  clientChecksum: boolean;
} {
  if (payload === undefined) throw new RpcError(status.INVALID_ARGUMENT, 'SecretPayload is required.');
  const data = Buffer.from(payload.data ?? Buffer.alloc(0));
  if (data.length > MAX_PAYLOAD_BYTES) {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `Secret payload is ${data.length} bytes; it cannot be larger than ${MAX_PAYLOAD_BYTES} bytes.`,
    );
  }
  const crc = crc32c(data);
  const given = payload.dataCrc32c;
  const clientChecksum = given !== undefined && given !== null;
  if (clientChecksum && Number(given) !== crc) {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      'Checksum mismatch: data_crc32c does not match the CRC32C of the payload data.',
    );
  }
  return { data, crc, clientChecksum };
}

/** A Pub/Sub topic name. */
const TOPIC = /^projects\/[^/]+\/topics\/[^/]+$/;

/** A secret's rotation and topics, as stored: period in seconds, next rotation as a Date. */
export interface RotationRule {
  rotation?: { rotationPeriodSeconds?: number; nextRotationTime?: Date };
  topics: string[];
}

/**
 * Validates `rotation` and `topics` as the service does: at most 10 topics named
 * `projects/P/topics/T`; rotation needs topics; a period of 3600 s to 100 years, whole seconds,
 * and then a next rotation time; a next rotation time at least 5 minutes and at most 100 years
 * ahead. @throws INVALID_ARGUMENT.
 */
export function checkRotationRule(secret: WireSecret | undefined, now: Date = new Date()): RotationRule {
  const topics = (secret?.topics ?? []).map((t) => t.name ?? '');
  if (topics.length > 10)
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `A Secret can have at most 10 topics; the request has ${topics.length}.`,
    );
  for (const topic of topics) {
    if (!TOPIC.test(topic))
      throw new RpcError(
        status.INVALID_ARGUMENT,
        `Topic name [${topic}] is invalid: must be of the form projects/*/topics/*.`,
      );
  }
  const rotation = secret?.rotation ?? undefined;
  if (rotation === undefined || (rotation.rotationPeriod == null && rotation.nextRotationTime == null))
    return { topics };
  if (topics.length === 0)
    throw new RpcError(
      status.INVALID_ARGUMENT,
      'Secret.topics must be set when Secret.rotation is set: rotation notifications are sent to the topics.',
    );
  const result: RotationRule = { topics, rotation: {} };
  if (rotation.rotationPeriod != null) {
    const seconds = Number(rotation.rotationPeriod.seconds ?? 0);
    if ((rotation.rotationPeriod.nanos ?? 0) !== 0 || seconds < 3600 || seconds > 3_153_600_000) {
      throw new RpcError(
        status.INVALID_ARGUMENT,
        'Secret.rotation.rotation_period must be in whole seconds, at least 3600s (1h) and at most 3153600000s (100 years).',
      );
    }
    if (rotation.nextRotationTime == null)
      throw new RpcError(
        status.INVALID_ARGUMENT,
        'Secret.rotation.next_rotation_time must be set when rotation_period is set.',
      );
    result.rotation!.rotationPeriodSeconds = seconds;
  }
  if (rotation.nextRotationTime != null) {
    const ms =
      Number(rotation.nextRotationTime.seconds ?? 0) * 1000 +
      Math.floor((rotation.nextRotationTime.nanos ?? 0) / 1e6);
    const ahead = (ms - now.getTime()) / 1000;
    if (ahead < 300 || ahead > 3_153_600_000) {
      throw new RpcError(
        status.INVALID_ARGUMENT,
        'Secret.rotation.next_rotation_time must be at least 5 minutes and at most 100 years in the future.',
      );
    }
    result.rotation!.nextRotationTime = new Date(ms);
  }
  return result;
}

/**
 * `version_destroy_ttl` as the service checks it: whole seconds, at least 24 hours. Returns the
 * seconds, or `undefined` when unset. @throws INVALID_ARGUMENT.
 */
export function checkDestroyTtlRule(secret: WireSecret | undefined): number | undefined {
  const ttl = secret?.versionDestroyTtl ?? undefined;
  if (ttl === undefined) return undefined;
  const seconds = Number(ttl.seconds ?? 0);
  if ((ttl.nanos ?? 0) !== 0 || !Number.isSafeInteger(seconds) || seconds < 86_400) {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      'Secret.version_destroy_ttl must be in whole seconds and at least 86400s (24h).',
    );
  }
  return seconds;
}
