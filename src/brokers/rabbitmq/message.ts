import type { ConsumeMessage, MessagePropertyHeaders, Options } from 'amqplib';
import type { InboundMessage } from '../broker.js';

/** Header values as strings: AMQP headers are typed (numbers, booleans, byte arrays, tables). */
export function headersToAttributes(headers: MessagePropertyHeaders | undefined): Record<string, string> {
  const attributes: Record<string, string> = {};
  if (headers === undefined) return attributes;
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') attributes[key] = value;
    else if (Buffer.isBuffer(value)) attributes[key] = value.toString('utf8');
    else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
      attributes[key] = String(value);
    else attributes[key] = JSON.stringify(value);
  }
  return attributes;
}

/**
 * Header the broker keeps its own delivery count in: the deliveries a message had before this copy
 * (it re-publishes a message to retry it, and counts a redelivery the queue does not count).
 */
export const DELIVERIES_HEADER = 'x-pullsecret-deliveries';

/** Headers RabbitMQ sets on a delivery, dropped from a re-published copy (its queue sets them again). */
const QUEUE_HEADERS = ['x-delivery-count'];

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** Redeliveries the queue itself counted: quorum queues set `x-delivery-count`; classic queues do not. */
function queueCount(message: Pick<ConsumeMessage, 'properties'>): number | undefined {
  return count(message.properties.headers?.['x-delivery-count']);
}

/** Deliveries before this copy, as the broker counted them (0 for a message as its publisher sent it). */
export function priorDeliveries(message: Pick<ConsumeMessage, 'properties'>): number {
  return count(message.properties.headers?.[DELIVERIES_HEADER]) ?? 0;
}

/**
 * A redelivery the queue does not count (a classic queue only flags it): the consumer before died
 * or stopped on this copy. The broker counts it by re-publishing the message with its count.
 */
export function isUncountedRedelivery(message: Pick<ConsumeMessage, 'fields' | 'properties'>): boolean {
  return message.fields.redelivered && queueCount(message) === undefined;
}

/**
 * Delivery attempt of a message: the broker's own count of earlier copies plus the queue's count of
 * this copy's redeliveries (`x-delivery-count`, quorum queues), plus one; an uncounted redelivery
 * adds one.
 */
export function deliveryAttemptOf(message: Pick<ConsumeMessage, 'fields' | 'properties'>): number {
  const redeliveries = queueCount(message) ?? (message.fields.redelivered ? 1 : 0);
  return priorDeliveries(message) + redeliveries + 1;
}

/** Headers of a re-published copy: the original ones with the broker's count, without the queue's own. */
export function copyHeaders(
  message: Pick<ConsumeMessage, 'properties'>,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  const headers: Record<string, unknown> = { ...message.properties.headers };
  for (const name of QUEUE_HEADERS) delete headers[name];
  return { ...headers, ...extra };
}

const KEPT_PROPERTIES = [
  'contentType',
  'contentEncoding',
  'correlationId',
  'messageId',
  'timestamp',
  'type',
  'appId',
] as const;

/** Properties a re-published copy keeps (persistent; `userId` is left out: RabbitMQ checks it against the login). */
export function copyProperties(message: Pick<ConsumeMessage, 'properties'>): Options.Publish {
  const properties = message.properties as unknown as Record<string, unknown>;
  const options: Record<string, unknown> = { persistent: true };
  for (const key of KEPT_PROPERTIES) if (properties[key] !== undefined) options[key] = properties[key];
  return options;
}

/** Builds what the handler sees from an AMQP delivery (the body is passed through untouched). */
export function toInboundMessage(message: ConsumeMessage): InboundMessage {
  const messageId: unknown = message.properties.messageId;
  return {
    id: typeof messageId === 'string' && messageId !== '' ? messageId : String(message.fields.deliveryTag),
    body: message.content,
    attributes: Object.freeze(headersToAttributes(copyHeaders(message, { [DELIVERIES_HEADER]: undefined }))),
    deliveryAttempt: deliveryAttemptOf(message),
  };
}
