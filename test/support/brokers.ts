import type { Disposition, InboundMessage, MessageHandler } from '../../src/brokers/broker.js';

export { eventually } from './until.js';

/** A handler that records every delivery and answers with `decide`. */
export function recorder(decide: (m: InboundMessage) => Disposition | Promise<Disposition> = () => 'ack'): {
  seen: InboundMessage[];
  handler: MessageHandler;
} {
  const seen: InboundMessage[] = [];
  return { seen, handler: async (m) => (seen.push(m), decide(m)) };
}
