import { PubSub } from '@google-cloud/pubsub';
import type { SecretManagerState, StoredSecret, StoredVersion } from './state.js';
import type { MethodName } from './types.js';

/**
 * Secret Manager's event notifications, published for real: a secret with `topics` gets one Pub/Sub
 * message per topic on every change of the secret or its versions (Get, List and Access publish
 * nothing). Format, as https://cloud.google.com/secret-manager/docs/event-notifications
 * ("Notification format") gives it: attributes `eventType`, `dataFormat` = `JSON_API_V1`,
 * `secretId` = the secret's full name with the project *number* (names.ts), `timestamp` (RFC 3339)
 * and, on version events, `versionId` = the version's full name; data the proto3 JSON of the Secret
 * or SecretVersion. A secret created with topics first gets `TOPIC_CONFIGURED` on each: a test
 * message with no data and no attribute but `eventType`. Published with the official client to the
 * Pub/Sub emulator the test names. Payload bytes are never part of a notification (a SecretVersion
 * resource holds none).
 */

/** The event type each mutating RPC publishes. */
const EVENT_OF: Partial<Record<MethodName, string>> = {
  CreateSecret: 'SECRET_CREATE',
  UpdateSecret: 'SECRET_UPDATE',
  DeleteSecret: 'SECRET_DELETE',
  AddSecretVersion: 'SECRET_VERSION_ADD',
  EnableSecretVersion: 'SECRET_VERSION_ENABLE',
  DisableSecretVersion: 'SECRET_VERSION_DISABLE',
  DestroySecretVersion: 'SECRET_VERSION_DESTROY',
};

/** One published notification (for assertions). */
export interface PublishedNotification {
  topic: string;
  attributes: Record<string, string>;
  data: string;
}

const iso = (date: Date | undefined): string | undefined => date?.toISOString();

/** The Secret resource in the proto3 JSON mapping (RFC 3339 times, `"3600s"` durations). */
export function secretJson(secret: StoredSecret): Record<string, unknown> {
  const rotation = secret.rotation;
  return {
    name: secret.name,
    replication:
      secret.replication.automatic !== undefined
        ? { automatic: secret.replication.automatic }
        : { userManaged: secret.replication.userManaged },
    createTime: iso(secret.createTime),
    labels: { ...secret.labels },
    ...(secret.topics === undefined ? {} : { topics: secret.topics.map((name) => ({ name })) }),
    etag: secret.etag,
    ...(rotation === undefined
      ? {}
      : {
          rotation: {
            ...(rotation.nextRotationTime === undefined
              ? {}
              : { nextRotationTime: iso(rotation.nextRotationTime) }),
            ...(rotation.rotationPeriodSeconds === undefined
              ? {}
              : { rotationPeriod: `${rotation.rotationPeriodSeconds}s` }),
          },
        }),
    ...(Object.keys(secret.annotations).length === 0 ? {} : { annotations: { ...secret.annotations } }),
  };
}

/** The SecretVersion resource in the proto3 JSON mapping. */
export function versionJson(secret: StoredSecret, version: StoredVersion): Record<string, unknown> {
  return {
    name: `${secret.name}/versions/${version.number}`,
    createTime: iso(version.createTime),
    ...(version.destroyTime === undefined ? {} : { destroyTime: iso(version.destroyTime) }),
    state: version.state,
    etag: version.etag,
    clientSpecifiedPayloadChecksum: version.clientChecksum,
  };
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Publishes notifications to the emulator at `host`; see the module comment. */
export class NotificationPublisher {
  private readonly client: PubSub;
  private readonly pending = new Set<Promise<void>>();
  /** Every notification published, in order. */
  readonly published: PublishedNotification[] = [];
  /** Publishes that failed (e.g. a topic the emulator does not have). */
  failures = 0;

  constructor(host: string, projectId: string) {
    this.client = new PubSub({ projectId, apiEndpoint: host });
  }

  /**
   * Called before an RPC runs: returns what to publish once it succeeded (the secret as it was
   * for a delete), or `undefined` when the call publishes nothing.
   */
  before(
    method: MethodName,
    request: Record<string, unknown>,
    state: SecretManagerState,
  ): ((response: unknown) => void) | undefined {
    const eventType = EVENT_OF[method];
    if (eventType === undefined) return undefined;
    if (method === 'DeleteSecret') {
      const secret = state.lookup(str(request.name));
      if (secret?.topics === undefined) return undefined;
      const data = secretJson(secret);
      const topics = [...secret.topics];
      return () => this.publish(topics, { eventType, secretId: secret.name }, data);
    }
    return (response) => {
      const name = str((response as { name?: unknown }).name);
      if (method === 'CreateSecret') this.topicConfigured(name, state);
      const secretName = name.replace(/\/versions\/[^/]+$/, '');
      const secret = state.lookup(secretName);
      if (secret?.topics === undefined) return;
      if (name === secretName)
        return this.publish(secret.topics, { eventType, secretId: secret.name }, secretJson(secret));
      const version = secret.versions.find((v) => `${secret.name}/versions/${v.number}` === name);
      if (version === undefined) return;
      this.publish(
        secret.topics,
        { eventType, secretId: secret.name, versionId: name },
        versionJson(secret, version),
      );
    };
  }

  /** Publishes `SECRET_ROTATE` for a secret with rotation, and advances its next rotation by the period. */
  rotate(secret: StoredSecret): void {
    if (secret.topics === undefined) return;
    const rotation = secret.rotation;
    if (rotation?.nextRotationTime !== undefined && rotation.rotationPeriodSeconds !== undefined) {
      rotation.nextRotationTime = new Date(
        rotation.nextRotationTime.getTime() + rotation.rotationPeriodSeconds * 1000,
      );
    }
    this.publish(secret.topics, { eventType: 'SECRET_ROTATE', secretId: secret.name }, secretJson(secret));
  }

  /** The test message sent to each topic of a secret created with topics (docs: "Event types"). */
  private topicConfigured(name: string, state: SecretManagerState): void {
    for (const topic of state.lookup(name)?.topics ?? [])
      this.send(topic, { eventType: 'TOPIC_CONFIGURED' }, '');
  }

  /** Waits for publishes under way. */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  async close(): Promise<void> {
    await this.flush();
    await this.client.close();
  }

  private publish(
    topics: readonly string[],
    attributes: Record<string, string>,
    resource: Record<string, unknown>,
  ): void {
    const data = JSON.stringify(resource);
    const all = { ...attributes, dataFormat: 'JSON_API_V1', timestamp: new Date().toISOString() };
    for (const topic of topics) this.send(topic, all, data);
  }

  private send(topic: string, attributes: Record<string, string>, data: string): void {
    const sent = this.client
      .topic(topic)
      .publishMessage({ data: Buffer.from(data), attributes })
      .then(
        () => void this.published.push({ topic, attributes, data }),
        () => void (this.failures += 1),
      );
    this.pending.add(sent);
    void sent.finally(() => this.pending.delete(sent));
  }
}
