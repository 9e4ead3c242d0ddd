import type { StoredSecret, StoredVersion } from './state.js';
import { toTimestamp } from './types.js';

/** The rotation and topics of a secret on the wire (absent when unset, as the service sends them). */
function notifyFields(secret: StoredSecret): Record<string, unknown> {
  const rotation = secret.rotation;
  return {
    ...(rotation === undefined
      ? {}
      : {
          rotation: {
            ...(rotation.nextRotationTime === undefined
              ? {}
              : { nextRotationTime: toTimestamp(rotation.nextRotationTime) }),
            ...(rotation.rotationPeriodSeconds === undefined
              ? {}
              : { rotationPeriod: { seconds: String(rotation.rotationPeriodSeconds), nanos: 0 } }),
          },
        }),
    ...(secret.topics === undefined ? {} : { topics: secret.topics.map((name) => ({ name })) }),
    ...(secret.versionDestroyTtlSeconds === undefined
      ? {}
      : { versionDestroyTtl: { seconds: String(secret.versionDestroyTtlSeconds), nanos: 0 } }),
  };
}

/** Stored resources as the service sends them (camelCase; the loader serializes them). */

export function toWireSecret(secret: StoredSecret): Record<string, unknown> {
  return {
    name: secret.name,
    replication: secret.replication,
    createTime: toTimestamp(secret.createTime),
    labels: { ...secret.labels },
    annotations: { ...secret.annotations },
    etag: secret.etag,
    ...notifyFields(secret),
  };
}

export function toWireVersion(secret: StoredSecret, version: StoredVersion): Record<string, unknown> {
  return {
    name: `${secret.name}/versions/${version.number}`,
    createTime: toTimestamp(version.createTime),
    ...(version.destroyTime === undefined ? {} : { destroyTime: toTimestamp(version.destroyTime) }),
    ...(version.scheduledDestroyTime === undefined
      ? {}
      : { scheduledDestroyTime: toTimestamp(version.scheduledDestroyTime) }),
    state: version.state,
    replicationStatus:
      secret.replication.userManaged === undefined ? { automatic: {} } : { userManaged: { replicas: [] } },
    etag: version.etag,
    clientSpecifiedPayloadChecksum: version.clientChecksum,
  };
}
