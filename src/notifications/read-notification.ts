import { clusterIdOfSecretId } from '../pullsecret/identifiers.js';

/**
 * Reads one Secret Manager event notification (a Pub/Sub message): attributes `eventType`,
 * `secretId` (`projects/P/secrets/S`, P the project number or id), `dataFormat` (`JSON`), and as
 * data the Secret or SecretVersion resource in JSON. Pure; never returns or logs the data.
 */

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
export interface NotificationReading {
  eventType: StoreEventType;
  outcome: NotificationOutcome;
  /** The cluster to reconcile (outcome `triggered`). */
  clusterId?: string;
  /** Why it is malformed: a fixed text, never message content. */
  problem?: string;
}

/** Classifies a notification; see the module comment. */
export function readNotification(message: { data: Buffer; attributes: Readonly<Record<string, string>> }): NotificationReading {
  const raw = message.attributes.eventType;
  const eventType: StoreEventType = (STORE_EVENT_TYPES as readonly string[]).includes(raw ?? '') && raw !== 'other' ? (raw as StoreEventType) : 'other';
  if (raw === undefined || raw === '') return { eventType, outcome: 'malformed', problem: 'no eventType attribute' };
  if (eventType === 'TOPIC_CONFIGURED') return { eventType, outcome: 'ignored' };
  const secretName = message.attributes.secretId ?? '';
  const match = SECRET_NAME.exec(secretName);
  if (match === null) return { eventType, outcome: 'malformed', problem: 'secretId attribute is not a secret name projects/P/secrets/S' };
  const problem = dataProblem(message, secretName);
  if (problem !== undefined) return { eventType, outcome: 'malformed', problem };
  const clusterId = clusterIdOfSecretId(match[1] as string);
  if (clusterId === undefined) return { eventType, outcome: 'foreign' };
  if (!TRIGGERS.has(eventType)) return { eventType, outcome: 'ignored' };
  return { eventType, outcome: 'triggered', clusterId };
}

/** The data must be the JSON of the secret named by `secretId`, or of one of its versions. */
function dataProblem(message: { data: Buffer; attributes: Readonly<Record<string, string>> }, secretName: string): string | undefined {
  const format = message.attributes.dataFormat;
  if (format !== undefined && format !== 'JSON') return 'dataFormat attribute is not JSON';
  if (message.data.length > MAX_DATA_BYTES) return 'data is larger than a resource';
  let resource: unknown;
  try {
    resource = JSON.parse(message.data.toString('utf8'));
  } catch {
    return 'data is not JSON';
  }
  const name = typeof resource === 'object' && resource !== null && !Array.isArray(resource) ? (resource as { name?: unknown }).name : undefined;
  if (typeof name !== 'string') return 'data is not a Secret or SecretVersion resource';
  // The service may name the project by number in one place and by id in another: compare the secret id.
  const ownSecret = secretName.slice(secretName.indexOf('/secrets/'));
  const named = name.replace(/\/versions\/[^/]+$/, '');
  if (!named.endsWith(ownSecret) || !/^projects\/[^/]+\/secrets\/[^/]+$/.test(named)) return 'data names another secret than secretId';
  return undefined;
}
