import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Disposition, InboundMessage, MessageHandler } from '../../src/brokers/broker.js';

/** Polls `check` every 20 ms until it holds; fails the test after `timeoutMs`. */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A handler that records every delivery and answers with `decide`. */
export function recorder(decide: (m: InboundMessage) => Disposition | Promise<Disposition> = () => 'ack'): { seen: InboundMessage[]; handler: MessageHandler } {
  const seen: InboundMessage[] = [];
  return { seen, handler: async (m) => (seen.push(m), decide(m)) };
}
