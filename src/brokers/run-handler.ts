import { describeError } from '../errors/index.js';
import type { Disposition, InboundMessage, MessageHandler } from './broker.js';

/**
 * Calls the handler for one message; a handler that throws (it should not) counts as 'retry', so a
 * bug never loses a message nor kills the consumer.
 */
export async function runHandler(
  handler: MessageHandler,
  message: InboundMessage,
  signal: AbortSignal,
  warn: (fields: Record<string, unknown>, text: string) => void,
): Promise<Disposition> {
  try {
    return await handler(message, signal);
  } catch (error) {
    warn({ message_id: message.id, ...describeError(error) }, 'broker message handler threw; retrying');
    return 'retry';
  }
}
