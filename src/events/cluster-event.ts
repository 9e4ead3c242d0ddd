import { createHash } from 'node:crypto';
import { CloudEvent, ValidationError } from 'cloudevents';
import { PullSecretError } from '../errors/index.js';
import { quoteIfSafe } from '../pullsecret/identifiers.js';
import { describeJsonProblem, parseStrictJson } from '../pullsecret/strict-json.js';

/** The Sentinel's current event type. */
export const RECONCILE_EVENT_TYPE = 'com.redhat.hyperfleet.cluster.reconcile';

/** Event types the adapter accepts: the Sentinel's reconcile plus the older create / update. */
const CLUSTER_EVENT_TYPES = [RECONCILE_EVENT_TYPE, 'cluster.create', 'cluster.update'] as const;

type ClusterEventType = (typeof CLUSTER_EVENT_TYPES)[number];

/**
 * The Sentinel's reconcile type as it is published: `com.redhat.hyperfleet.{kind}.reconcile`, the kind
 * as the Sentinel names it (`Cluster`, `clusters`; https://github.com/openshift-hyperfleet/hyperfleet-sentinel,
 * `internal/publisher/publisher.go`), and with the `.v1` suffix HyperFleet's docs show. A cluster's
 * is read as `RECONCILE_EVENT_TYPE`; another kind's makes the event another kind of resource.
 */
const RECONCILE_TYPE_FORM = /^com\.redhat\.hyperfleet\.([A-Za-z][A-Za-z0-9]{0,62})\.reconcile(?:\.v1)?$/;

/** The kind a Sentinel reconcile type names, or `undefined` for any other type. */
function reconcileKind(type: string): string | undefined {
  return RECONCILE_TYPE_FORM.exec(type)?.[1];
}

/**
 * A cluster's kind, in `data.kind` or the type (ignoring case, singular or plural); an event without
 * a kind (the older create / update ones) is a cluster's too.
 */
function isClusterKind(kind: string): boolean {
  const lower = kind.toLowerCase();
  return lower === 'cluster' || lower === 'clusters';
}

/** Largest message body decoded; checked before parsing so a huge body costs nothing. */
export const MAX_EVENT_BYTES = 256 * 1024;

/** Longest cluster id accepted here; the pipeline applies the real id rules later. */
const MAX_CLUSTER_ID_LENGTH = 256;

/** A decoded cluster event: a trigger only (the pipeline always GETs the cluster). Frozen. */
export interface ClusterEvent {
  /**
   * The CloudEvent `id` as sent when it is a UUID or a lowercase slug; otherwise `sha256:` and 16 hex
   * digits of it. It is only logged, and a body is untrusted: a credential sent as the id must not
   * reach a log line.
   */
  readonly eventId: string;
  readonly type: ClusterEventType;
  readonly source: string;
  readonly clusterId: string;
  readonly generation?: number;
  readonly href?: string;
  readonly time?: string;
}

/**
 * An event about another kind of HyperFleet resource (`data.kind` e.g. `NodePool`): the adapter
 * acknowledges and counts it, and never reconciles it. Frozen.
 */
interface OtherKindEvent {
  /** As `ClusterEvent.eventId`. */
  readonly eventId: string;
  /** `data.kind` when it has the form of a kind name (letters and digits), otherwise `undefined`. */
  readonly kind?: string;
}

/** What a message body holds: a cluster's event, or an event about another kind of resource. */
type DecodedEvent = { readonly cluster: ClusterEvent } | { readonly other: OtherKindEvent };

const REQUIRED_ATTRIBUTES = ['id', 'source', 'type'] as const;

/**
 * Forms of event ids, types and attribute names shown in messages as they are. Anything else is
 * described, not quoted: a body is untrusted, and a credential pasted into `id` or `data.id` must
 * not come back in a log line or a status.
 */
const SAFE_EVENT_ID =
  /^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[a-z0-9][a-z0-9.-]{0,63})$/;
const SAFE_TYPE = /^[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){1,10}$/;
const SAFE_ATTRIBUTE = /^[a-z0-9]{1,20}$/;
const SAFE_KIND = /^[A-Za-z][A-Za-z0-9]{0,62}$/;

function loggableEventId(eventId: string): string {
  return SAFE_EVENT_ID.test(eventId)
    ? eventId
    : `sha256:${createHash('sha256').update(eventId, 'utf8').digest('hex').slice(0, 16)}`;
}

function eventRef(eventId: string): string {
  return `event ${quoteIfSafe(eventId, SAFE_EVENT_ID)}`;
}

function invalid(message: string): PullSecretError {
  return new PullSecretError('EVENT_INVALID', message);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isClusterEventType(type: string): type is ClusterEventType {
  return (CLUSTER_EVENT_TYPES as readonly string[]).includes(type);
}

/**
 * Runs the CloudEvents SDK's validation and turns its error into our message. The SDK's own text is
 * not repeated: some of its messages quote attribute values, which come from the body.
 */
function validateWithSdk(event: Record<string, unknown>, eventId: string): void {
  try {
    new CloudEvent<unknown>(event, true);
  } catch (err) {
    const fields = new Set<string>();
    if (err instanceof ValidationError && Array.isArray(err.errors)) {
      for (const problem of err.errors) {
        if (typeof problem === 'object' && problem.instancePath.length > 1) {
          fields.add(problem.instancePath.slice(1).split('/')[0] ?? '');
        }
      }
    }
    const detail: string =
      fields.size > 0
        ? `invalid attribute ${[...fields].map((f) => quoteIfSafe(f, SAFE_ATTRIBUTE)).join(', ')}`
        : 'attribute names must be lowercase letters and digits, and values CloudEvents types';
    // No `cause`: the SDK's error may hold attribute values taken from the body.
    throw invalid(`${eventRef(eventId)} is not a valid CloudEvent 1.0: ${detail}`);
  }
}

function parseBody(body: Buffer): Record<string, unknown> {
  if (body.length > MAX_EVENT_BYTES) {
    throw invalid(`event body is ${body.length} bytes, over the ${MAX_EVENT_BYTES}-byte limit`);
  }
  // The strict parser: a duplicated attribute (say two `data.id`) is refused, since another reader
  // of the same message could act on the other value; deep nesting is refused before the SDK walks it.
  const result = parseStrictJson(body.toString('utf8'));
  if (!result.ok) {
    if (result.problem.kind === 'syntax')
      throw invalid('event body is not valid JSON (expected a structured-mode CloudEvent)');
    throw invalid(`event body refused: ${describeJsonProblem(result.problem)}`);
  }
  const parsed = result.value;
  if (!isPlainObject(parsed))
    throw invalid('event body is not a JSON object (expected a structured-mode CloudEvent)');
  return parsed;
}

function checkEnvelope(event: Record<string, unknown>): void {
  if (event.specversion === undefined) throw invalid('event attribute "specversion" is missing');
  if (event.specversion !== '1.0') throw invalid('event attribute "specversion" must be "1.0"');
  for (const name of REQUIRED_ATTRIBUTES) {
    const value = event[name];
    if (typeof value !== 'string' || value.length === 0) {
      throw invalid(`event attribute "${name}" is missing or not a non-empty string`);
    }
  }
}

function readClusterId(data: Record<string, unknown>, type: ClusterEventType, eventId: string): string {
  // The older create/update events name it `clusterId`; the Sentinel's (and some of their examples)
  // use `id`.
  const field = type !== RECONCILE_EVENT_TYPE && data.clusterId !== undefined ? 'clusterId' : 'id';
  const value = data[field];
  const where = `${eventRef(eventId)}: data.${field}`;
  if (value === undefined) throw invalid(`${where} (the cluster id) is missing`);
  if (typeof value !== 'string' || value.length === 0)
    throw invalid(`${where} (the cluster id) must be a non-empty string`);
  if (value.length > MAX_CLUSTER_ID_LENGTH) {
    throw invalid(`${where} (the cluster id) is longer than ${MAX_CLUSTER_ID_LENGTH} characters`);
  }
  return value;
}

/**
 * Decodes a structured-mode CloudEvents 1.0 JSON message body: a frozen `ClusterEvent`, or, when
 * `data.kind` names another kind of resource than `Cluster` (whatever the event type: the Sentinel
 * may name it after the kind), a frozen `OtherKindEvent`. The envelope is validated with the
 * official CloudEvents SDK; the cluster id's format is not checked here (the pipeline does it, so
 * it can report the cluster).
 *
 * @throws PullSecretError EVENT_INVALID for a body over 256 KiB, not JSON (or with duplicate keys, or
 *   nested deeper than 64 levels), not an object, a missing or
 *   invalid `specversion` / `id` / `source` / `type`, a `data.kind` that is not a string, an unknown
 *   type, missing `data`, a missing or non-string cluster id, or a `generation` that is not a
 *   non-negative integer. Messages name fields and quote ids only in their expected form (UUID,
 *   slug), never the body.
 */
export function decodeEvent(body: Buffer): DecodedEvent {
  const event = parseBody(body);
  checkEnvelope(event);
  const eventId = event.id as string;
  validateWithSdk(event, eventId);

  const data = event.data;
  const typeKind = reconcileKind(event.type as string);
  const kind = isPlainObject(data) && data.kind !== undefined ? data.kind : typeKind;
  if (kind !== undefined && (typeof kind !== 'string' || !isClusterKind(kind))) {
    if (typeof kind !== 'string') throw invalid(`${eventRef(eventId)}: data.kind must be a string`);
    const other: OtherKindEvent = {
      eventId: loggableEventId(eventId),
      ...(SAFE_KIND.test(kind) ? { kind } : {}),
    };
    return Object.freeze({ other: Object.freeze(other) });
  }
  const type = typeKind === undefined ? (event.type as string) : RECONCILE_EVENT_TYPE;
  if (!isClusterEventType(type)) {
    throw invalid(
      `${eventRef(eventId)} has unknown type ${quoteIfSafe(type, SAFE_TYPE)} (expected one of ` +
        `${CLUSTER_EVENT_TYPES.join(', ')})`,
    );
  }
  if (!isPlainObject(data)) throw invalid(`${eventRef(eventId)}: "data" is missing or not a JSON object`);

  const clusterId = readClusterId(data, type, eventId);
  const { generation, href } = data;
  if (
    generation !== undefined &&
    (typeof generation !== 'number' || !Number.isSafeInteger(generation) || generation < 0)
  ) {
    throw invalid(`${eventRef(eventId)}: data.generation must be a non-negative integer`);
  }
  if (href !== undefined && typeof href !== 'string') {
    throw invalid(`${eventRef(eventId)}: data.href must be a string`);
  }

  const decoded: ClusterEvent = {
    eventId: loggableEventId(eventId),
    type,
    source: event.source as string,
    clusterId,
    ...(generation === undefined ? {} : { generation }),
    ...(href === undefined ? {} : { href }),
    ...(typeof event.time === 'string' ? { time: event.time } : {}),
  };
  return Object.freeze({ cluster: Object.freeze(decoded) });
}

/**
 * `decodeEvent` for callers that handle clusters only.
 * @throws PullSecretError EVENT_INVALID as `decodeEvent`, and for an event about another kind of resource.
 */
export function decodeClusterEvent(body: Buffer): ClusterEvent {
  const decoded = decodeEvent(body);
  if ('cluster' in decoded) return decoded.cluster;
  throw invalid(`${eventRef(decoded.other.eventId)} is about another kind of resource than a cluster`);
}
