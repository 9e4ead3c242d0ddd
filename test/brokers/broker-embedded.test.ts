import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Broker } from '../../src/brokers/broker.js';
import { createBroker } from '../../src/brokers/registry.js';
import { decodeClusterEvent } from '../../src/events/cluster-event.js';

const reconcile = readFileSync(new URL('../fixtures/events/cluster-reconcile.json', import.meta.url));

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
    for (let i = 0; i < count; i++)
      await broker.publish(Buffer.from(JSON.stringify({ ...template, id: `evt-${i}` })));
    await eventually('all events', () => counts.size === count);
    const elapsedMs = performance.now() - started;
    assert.ok([...counts.values()].every((n) => n === 1));
    await broker.stop();
    // Informational only (speed belongs in benchmarks).
    t.diagnostic(`embedded broker: ${count} events decoded and acked in ${elapsedMs.toFixed(0)} ms`);
  });
});
