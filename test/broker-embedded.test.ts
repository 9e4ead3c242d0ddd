import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Broker, Disposition, InboundMessage, MessageHandler } from '../src/brokers/broker.js';
import { createBroker } from '../src/brokers/registry.js';
import { decodeClusterEvent } from '../src/events/cluster-event.js';

const reconcile = readFileSync(new URL('./fixtures/events/cluster-reconcile.json', import.meta.url));

async function embedded(extra: Record<string, unknown> = {}): Promise<Broker> {
  return createBroker({ type: 'embedded', retryDelayMs: 5, retryMaxDelayMs: 20, ...extra });
}

async function eventually(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function recorder(decide: (m: InboundMessage) => Disposition | Promise<Disposition> = () => 'ack'): { seen: InboundMessage[]; handler: MessageHandler } {
  const seen: InboundMessage[] = [];
  return { seen, handler: async (m) => (seen.push(m), decide(m)) };
}

describe('embedded broker (through the registry)', () => {
  it('carries 10,000 events through with each one handled exactly once', async (t) => {
    const broker = await embedded({ maxInFlight: 16 });
    const counts = new Map<string, number>();
    const count = 10_000;
    await broker.start(async (message) => {
      const event = decodeClusterEvent(message.body);
      counts.set(event.eventId, (counts.get(event.eventId) ?? 0) + 1);
      return 'ack';
    });
    const template = JSON.parse(reconcile.toString()) as Record<string, unknown>;
    const started = performance.now();
    for (let i = 0; i < count; i++) await broker.publish(Buffer.from(JSON.stringify({ ...template, id: `evt-${i}` })));
    await eventually('all events', () => counts.size === count);
    const elapsedMs = performance.now() - started;
    assert.ok([...counts.values()].every((n) => n === 1));
    await broker.stop();
    // Informational only (speed belongs in benchmarks).
    t.diagnostic(`embedded broker: ${count} events decoded and acked in ${elapsedMs.toFixed(0)} ms`);
  });

  it('passes a malformed body to the handler untouched; reject drops it', async () => {
    const broker = await embedded();
    const malformed = Buffer.from([0xff, 0x00, 0x7b]);
    const { seen, handler } = recorder(() => 'reject');
    await broker.start(handler);
    await broker.publish(malformed);
    await eventually('the delivery', () => seen.length === 1);
    await sleep(50);
    assert.equal(seen.length, 1, 'a rejected message is not redelivered');
    assert.deepEqual(seen[0]?.body, malformed);
    await broker.stop();
  });

  it('redelivers on retry with a growing deliveryAttempt, at most maxDeliveries times', async () => {
    const broker = await embedded({ maxDeliveries: 4 });
    const { seen, handler } = recorder(() => 'retry');
    await broker.start(handler);
    await broker.publish(Buffer.from('x'));
    await eventually('four deliveries', () => seen.length === 4);
    await sleep(100);
    assert.deepEqual(seen.map((m) => m.deliveryAttempt), [1, 2, 3, 4]);
    await broker.stop();
  });

  it('stop drains in-flight work; what did not finish is delivered again on the next start', async () => {
    const broker = await embedded({ maxInFlight: 2 });
    const seen: string[] = [];
    await broker.start(async (m, signal) => {
      seen.push(m.body.toString());
      if (m.body.toString() === 'finishes') return sleep(50).then(() => 'ack' as const);
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      return 'ack';
    });
    await broker.publish(Buffer.from('finishes'));
    await broker.publish(Buffer.from('hangs'));
    await eventually('both in flight', () => seen.length === 2);
    await broker.stop({ drainMs: 200 });
    assert.equal(broker.isReady(), false);
    const next = recorder();
    await broker.start(next.handler);
    await eventually('the redelivery', () => next.seen.length === 1);
    assert.deepEqual(next.seen.map((m) => [m.body.toString(), m.deliveryAttempt]), [['hangs', 2]]);
    await broker.stop();
  });
});
