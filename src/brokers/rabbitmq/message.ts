import type { ConsumeMessage, MessagePropertyHeaders } from 'amqplib';
import type { InboundMessage } from '../broker.js';

/** Header values as strings: AMQP headers are typed (numbers, booleans, byte arrays, tables). */
export function headersToAttributes(headers: MessagePropertyHeaders | undefined): Record<string, string> {
  const attributes: Record<string, string> = {};
  if (headers === undefined) return attributes;
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') attributes[key] = value;
    else if (Buffer.isBuffer(value)) attributes[key] = value.toString('utf8');
    else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') attributes[key] = String(value);
    else attributes[key] = JSON.stringify(value);
  }
  return attributes;
}

/**
 * Delivery attempt of a message: quorum queues count deliveries in `x-delivery-count`; classic
 * queues only flag a redelivery, which makes it 2 (the broker does not tell more).
 */
export function deliveryAttemptOf(message: Pick<ConsumeMessage, 'fields' | 'properties'>): number {
  const count: unknown = message.properties.headers?.['x-delivery-count'];
  if (typeof count === 'number' && Number.isSafeInteger(count) && count >= 0) return count + 1;
  return message.fields.redelivered ? 2 : 1;
}

/** Builds what the handler sees from an AMQP delivery (the body is passed through untouched). */
export function toInboundMessage(message: ConsumeMessage): InboundMessage {
  const messageId: unknown = message.properties.messageId;
  return {
    id: typeof messageId === 'string' && messageId !== '' ? messageId : String(message.fields.deliveryTag),
    body: message.content,
    attributes: Object.freeze(headersToAttributes(message.properties.headers)),
    deliveryAttempt: deliveryAttemptOf(message),
  };
}
