import type { StoredSecret, StoredVersion } from './state.js';
import { toTimestamp } from './types.js';

/** Stored resources as the service sends them (camelCase; the loader serializes them). */

export function toWireSecret(secret: StoredSecret): Record<string, unknown> {
  return {
    name: secret.name,
    replication: secret.replication,
    createTime: toTimestamp(secret.createTime),
    labels: { ...secret.labels },
    annotations: { ...secret.annotations },
    etag: secret.etag,
  };
}

export function toWireVersion(secret: StoredSecret, version: StoredVersion): Record<string, unknown> {
  return {
    name: `${secret.name}/versions/${version.number}`,
    createTime: toTimestamp(version.createTime),
    ...(version.destroyTime === undefined ? {} : { destroyTime: toTimestamp(version.destroyTime) }),
    state: version.state,
    replicationStatus: secret.replication.userManaged === undefined ? { automatic: {} } : { userManaged: { replicas: [] } },
    etag: version.etag,
    clientSpecifiedPayloadChecksum: version.clientChecksum,
  };
}
