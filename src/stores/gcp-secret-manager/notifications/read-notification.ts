import { clusterIdOfSecretId } from '../../../pullsecret/identifiers.js';

/**
 * Reads one Secret Manager event notification (a Pub/Sub message) in the service's format
 * (https://cloud.google.com/secret-manager/docs/event-notifications, "Notification format"):
 * attributes `eventType`, `dataFormat` = `JSON_API_V1`, `secretId` = `projects/P/secrets/S`,
 * `timestamp`, and `versionId` on version events; as data the Secret or SecretVersion resource in
 * proto3 JSON. `TOPIC_CONFIGURED` is a test message with `eventType` only. P is the project
 * *number* (the configured store names the project by id): the cluster comes from the secret id S
 * alone, and the reconcile it triggers reads everything again from the configured project, so no
 * number-to-id lookup is needed. Pure; never returns or logs the data.
 */

/** The only `dataFormat` Secret Manager sends. */
const NOTIFICATION_DATA_FORMAT = 'JSON_API_V1';

/** Event types Secret Manager sends (docs: "Event notifications"); anything else counts as `other`. */
export const STORE_EVENT_TYPES = [
  'SECRET_CREATE',
  'SECRET_UPDATE',
  'SECRET_DELETE',
  'SECRET_VERSION_ADD',
  'SECRET_VERSION_ENABLE',
  'SECRET_VERSION_DISABLE',
  'SECRET_VERSION_DESTROY',
  'SECRET_VERSION_DESTROY_SCHEDULED',
  'SECRET_ROTATE',
  'TOPIC_CONFIGURED',
  'other',
] as const;
export type StoreEventType = (typeof STORE_EVENT_TYPES)[number];

/** What became of a notification, as counted in `pullsecret_store_notifications_total{outcome}`. */
export const NOTIFICATION_OUTCOMES = ['triggered', 'ignored', 'foreign', 'malformed'] as const;
export type NotificationOutcome = (typeof NOTIFICATION_OUTCOMES)[number];

/**
 * Events that may mean the stored content or its availability changed under us: a version added,
 * enabled, disabled, destroyed (or scheduled for it), the rotation time reached, the secret updated
 * or deleted. SECRET_CREATE is followed by a version add when content arrives; TOPIC_CONFIGURED is
 * the service's test message.
 */
const TRIGGERS: ReadonlySet<string> = new Set([
  'SECRET_UPDATE',
  'SECRET_DELETE',
  'SECRET_VERSION_ADD',
  'SECRET_VERSION_ENABLE',
  'SECRET_VERSION_DISABLE',
  'SECRET_VERSION_DESTROY',
  'SECRET_VERSION_DESTROY_SCHEDULED',
  'SECRET_ROTATE',
]);

const SECRET_NAME = /^projects\/[^/]{1,100}\/secrets\/([A-Za-z0-9_-]{1,255})$/;
/** A notification's data is a resource's metadata: far below this. */
const MAX_DATA_BYTES = 256 * 1024;

/** The reading of a notification. */
interface NotificationReading {
  eventType: StoreEventType;
  outcome: NotificationOutcome;
  /** The cluster to reconcile (outcome `triggered`). */
  clusterId?: string;
  /** Why it is malformed: a fixed text, never message content. */
  problem?: string;
}

/** Classifies a notification; see the module comment. */
export function readNotification(message: {
  data: Buffer;
  attributes: Readonly<Record<string, string>>;
}): NotificationReading {
  const raw = message.attributes.eventType;
  const eventType: StoreEventType =
    (STORE_EVENT_TYPES as readonly string[]).includes(raw ?? '') && raw !== 'other'
      ? (raw as StoreEventType)
      : 'other';
  if (raw === undefined || raw === '')
    return { eventType, outcome: 'malformed', problem: 'no eventType attribute' };
  if (eventType === 'TOPIC_CONFIGURED') return { eventType, outcome: 'ignored' };
  const secretName = message.attributes.secretId ?? '';
  const match = SECRET_NAME.exec(secretName);
  if (match === null)
    return {
      eventType,
      outcome: 'malformed',
      problem: 'secretId attribute is not a secret name projects/P/secrets/S',
    };
  const problem = dataProblem(message, secretName);
  if (problem !== undefined) return { eventType, outcome: 'malformed', problem };
  const clusterId = clusterIdOfSecretId(match[1] as string);
  if (clusterId === undefined) return { eventType, outcome: 'foreign' };
  if (!TRIGGERS.has(eventType)) return { eventType, outcome: 'ignored' };
  return { eventType, outcome: 'triggered', clusterId };
}

/** The data must be the JSON of the secret named by `secretId`, or of one of its versions. */
function dataProblem(
  message: { data: Buffer; attributes: Readonly<Record<string, string>> },
  secretName: string,
): string | undefined {
  if (message.attributes.dataFormat !== NOTIFICATION_DATA_FORMAT)
    return `dataFormat attribute is not ${NOTIFICATION_DATA_FORMAT}`;
  if (message.data.length > MAX_DATA_BYTES) return 'data is larger than a resource';
  let resource: unknown;
  try {
    resource = JSON.parse(message.data.toString('utf8'));
  } catch {
    return 'data is not JSON';
  }
  const name =
    typeof resource === 'object' && resource !== null && !Array.isArray(resource)
      ? (resource as { name?: unknown }).name
      : undefined;
  if (typeof name !== 'string') return 'data is not a Secret or SecretVersion resource';
  // Both names carry the project number, but the id would name the same project: compare the secret id.
  const ownSecret = secretName.slice(secretName.indexOf('/secrets/'));
  const named = name.replace(/\/versions\/[^/]+$/, '');
  if (!named.endsWith(ownSecret) || !/^projects\/[^/]+\/secrets\/[^/]+$/.test(named))
    return 'data names another secret than secretId';
  return undefined;
}
