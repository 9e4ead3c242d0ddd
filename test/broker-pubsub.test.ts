import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PubSub, type Message } from '@google-cloud/pubsub';
import type { Broker, Disposition, InboundMessage, MessageHandler } from '../src/brokers/broker.js';
import { createBroker } from '../src/brokers/registry.js';
import { startPubSubEmulator, type PubSubEmulator } from './support/pubsub-emulator.js';

// Stay on loopback: no metadata server lookups, a fake project.
process.env.METADATA_SERVER_DETECTION = 'none';
process.env.GOOGLE_CLOUD_PROJECT = 'pull-secret-test';

let emulator: PubSubEmulator;
let admin: PubSub;
const brokers: Broker[] = [];

before(async () => {
  emulator = await startPubSubEmulator();
  process.env.PUBSUB_EMULATOR_HOST = emulator.host;
  admin = new PubSub({ projectId: 'pull-secret-test' });
}, { timeout: 60_000 });

after(async () => {
  await Promise.all(brokers.map((b) => b.stop({ drainMs: 100 })));
  await admin?.close().catch(() => undefined);
  await emulator?.stop();
});

function uniqueNames(): { topic: string; subscriptionId: string } {
  const id = randomUUID().slice(0, 8);
  return { topic: `clusters-${id}`, subscriptionId: `pullsecret-${id}` };
}

/** A broker on the emulator; the first one of each test names the endpoint explicitly, the rest use PUBSUB_EMULATOR_HOST. */
async function pubsub(names: { topic: string; subscriptionId: string }, extra: Record<string, unknown> = {}): Promise<Broker> {
  const broker = await createBroker({
    type: 'pubsub',
    maxInFlight: 4,
    retryMinBackoffSeconds: 0,
    retryMaxBackoffSeconds: 1,
    ...names,
    ...extra,
  });
  brokers.push(broker);
  return broker;
}

async function eventually(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function recorder(decide: (m: InboundMessage) => Disposition | Promise<Disposition> = () => 'ack'): { seen: InboundMessage[]; handler: MessageHandler } {
  const seen: InboundMessage[] = [];
  return { seen, handler: async (m) => (seen.push(m), decide(m)) };
}

describe('Pub/Sub broker (real emulator)', { timeout: 60_000 }, () => {
  it('creates the topology, delivers body and attributes, and ack removes', async () => {
    const names = uniqueNames();
    const broker = await pubsub(names, { apiEndpoint: emulator.host, projectId: 'pull-secret-test' });
    const { seen, handler } = recorder();
    await broker.start(handler);
    assert.equal(broker.isReady(), true);
    const [subscription] = await admin.subscription(names.subscriptionId).getMetadata();
    assert.equal(subscription.deadLetterPolicy?.deadLetterTopic, `projects/pull-secret-test/topics/${names.subscriptionId}-dlq`);
    assert.equal(subscription.deadLetterPolicy?.maxDeliveryAttempts, 5);

    await broker.publish(Buffer.from('{"n":1}'), { 'ce-type': 'x' });
    await broker.publish(Buffer.from('{"n":2}'));
    await eventually('two deliveries', () => seen.length === 2);
    assert.deepEqual(seen.map((m) => m.body.toString()).sort(), ['{"n":1}', '{"n":2}']);
    assert.equal(seen.find((m) => m.body.toString() === '{"n":1}')?.attributes['ce-type'], 'x');
    assert.ok(seen.every((m) => m.deliveryAttempt === 1 && m.id.length > 0));
    await broker.stop();
    assert.equal(broker.isReady(), false);

    // Acked messages are gone: a fresh consumer gets nothing.
    const later = recorder();
    await (await pubsub(names)).start(later.handler);
    await sleep(1_000);
    assert.equal(later.seen.length, 0);
  });

  it('redelivers on retry with a growing deliveryAttempt', async () => {
    const broker = await pubsub(uniqueNames());
    const { seen, handler } = recorder((m) => (m.deliveryAttempt < 3 ? 'retry' : 'ack'));
    await broker.start(handler);
    await broker.publish(Buffer.from('again'));
    await eventually('two redeliveries', () => seen.length === 3);
    assert.deepEqual(seen.map((m) => m.deliveryAttempt), [1, 2, 3]);
  });

  it('dead-letters a rejected message to {subscriptionId}-dlq and passes a malformed body through', async () => {
    const names = uniqueNames();
    const broker = await pubsub(names);
    const malformed = Buffer.from([0xff, 0x00, 0x7b, 0x6e, 0x6f, 0x74]);
    const { seen, handler } = recorder(() => 'reject');
    await broker.start(handler);
    await broker.publish(malformed, { reason: 'bad' });
    await eventually('the delivery', () => seen.length === 1);
    assert.deepEqual(seen[0]?.body, malformed);

    const dead: Message[] = [];
    const dlq = admin.subscription(`${names.subscriptionId}-dlq`);
    dlq.on('message', (m: Message) => (dead.push(m), m.ack()));
    await eventually('the dead letter', () => dead.length === 1);
    await dlq.close();
    assert.deepEqual(dead[0]?.data, malformed);
    assert.equal(dead[0]?.attributes.reason, 'bad');
    assert.equal(dead[0]?.attributes.CloudPubSubDeadLetterSourceSubscription, names.subscriptionId);
    await sleep(500);
    assert.equal(seen.length, 1, 'a rejected message is not retried');
  });

  it('shares one subscription between consumers (each message handled once)', async () => {
    const names = uniqueNames();
    const slow = async (): Promise<Disposition> => (await sleep(15), 'ack');
    const a = recorder(slow);
    const b = recorder(slow);
    await (await pubsub(names, { maxInFlight: 2 })).start(a.handler);
    await (await pubsub(names, { maxInFlight: 2 })).start(b.handler);
    const publisher = await pubsub(names);
    const count = 40;
    for (let i = 0; i < count; i++) {
      // One publish batch goes to one stream, so spread them out to give both consumers a share.
      await publisher.publish(Buffer.from(`m${i}`));
      await sleep(10);
    }
    await eventually('all messages', () => a.seen.length + b.seen.length >= count);
    await sleep(300);
    const bodies = [...a.seen, ...b.seen].map((m) => m.body.toString());
    assert.equal(bodies.length, count, 'no message handled twice');
    assert.equal(new Set(bodies).size, count);
    assert.ok(a.seen.length > 0 && b.seen.length > 0, `both consumers work (${a.seen.length}/${b.seen.length})`);
  });

  it('stop drains in-flight work and nacks unfinished messages for the next consumer', async () => {
    const names = uniqueNames();
    const first = await pubsub(names);
    const seen: InboundMessage[] = [];
    let aborted = false;
    await first.start(async (m, signal) => {
      seen.push(m);
      if (m.body.toString() === 'finishes') return sleep(100).then(() => 'ack' as const);
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      aborted = true;
      return 'ack';
    });
    await first.publish(Buffer.from('finishes'));
    await first.publish(Buffer.from('hangs'));
    await eventually('both in flight', () => seen.length === 2);
    await first.stop({ drainMs: 400 });
    assert.equal(aborted, true);

    const next = recorder();
    await (await pubsub(names)).start(next.handler);
    await eventually('the redelivery', () => next.seen.length >= 1);
    await sleep(500);
    assert.deepEqual(next.seen.map((m) => [m.body.toString(), m.deliveryAttempt]), [['hangs', 2]]);
  });

  it('is not ready after a stream error, and ready again once the stream is re-established', async () => {
    const names = uniqueNames();
    const broker = await pubsub(names, { reconnectBaseDelayMs: 100, reconnectMaxDelayMs: 500 });
    const { seen, handler } = recorder();
    await broker.start(handler);
    assert.equal(broker.isReady(), true);
    // Deleting the subscription ends the stream with NOT_FOUND, which the library does not retry.
    await admin.subscription(names.subscriptionId).delete();
    await eventually('not ready', () => !broker.isReady());
    await admin.topic(names.topic).createSubscription(names.subscriptionId);
    await eventually('ready again', () => broker.isReady());
    await broker.publish(Buffer.from('after'));
    await eventually('a delivery on the re-opened stream', () => seen.length === 1);
  });

  it('refuses missing resources when createIfMissing is off (CONFIG_INVALID)', async () => {
    const broker = await pubsub(uniqueNames(), { createIfMissing: false });
    await assert.rejects(broker.start(async () => 'ack'), { code: 'CONFIG_INVALID', message: /topic "clusters-[0-9a-f]+" does not exist/ });
  });
});
