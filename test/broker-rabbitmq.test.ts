import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type ChannelModel, type GetMessage } from 'amqplib';
import type { Broker, Disposition, InboundMessage, MessageHandler } from '../src/brokers/broker.js';
import { createBroker } from '../src/brokers/registry.js';
import { startRabbitMq, type RabbitMqServer } from './support/rabbitmq.js';

let server: RabbitMqServer;
let admin: ChannelModel;
const brokers: Broker[] = [];

before(async () => {
  server = await startRabbitMq();
  admin = await connect(server.url);
}, { timeout: 60_000 });

after(async () => {
  await Promise.all(brokers.map((b) => b.stop({ drainMs: 100 })));
  await admin?.close().catch(() => undefined);
  await server?.stop();
});

/** A broker on its own exchange / topic (so tests do not see each other's messages). */
async function rabbit(names: { exchange: string; topic: string; subscriptionId?: string }, extra: Record<string, unknown> = {}): Promise<Broker> {
  const broker = await createBroker({
    type: 'rabbitmq',
    url: server.url,
    subscriptionId: 'pullsecret',
    maxInFlight: 4,
    retryDelayMs: 200,
    reconnectBaseDelayMs: 100,
    reconnectMaxDelayMs: 1_000,
    ...names,
    ...extra,
  });
  brokers.push(broker);
  return broker;
}

function uniqueNames(): { exchange: string; topic: string } {
  const id = randomUUID().slice(0, 8);
  return { exchange: `ex-${id}`, topic: `clusters-${id}` };
}

async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Records every delivery and answers with `decide`. */
function recorder(decide: (m: InboundMessage) => Disposition | Promise<Disposition> = () => 'ack'): { seen: InboundMessage[]; handler: MessageHandler } {
  const seen: InboundMessage[] = [];
  return { seen, handler: async (m) => (seen.push(m), decide(m)) };
}

/** Takes one message off `queue`, waiting for it to arrive. */
async function getOne(queue: string): Promise<GetMessage> {
  const channel = await admin.createChannel();
  try {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const message = await channel.get(queue, { noAck: true });
      if (message !== false) return message;
      if (Date.now() > deadline) assert.fail(`nothing arrived on ${queue}`);
      await sleep(20);
    }
  } finally {
    await channel.close();
  }
}

async function queueDepth(queue: string): Promise<number> {
  const channel = await admin.createChannel();
  try {
    return (await channel.checkQueue(queue)).messageCount;
  } finally {
    await channel.close();
  }
}

describe('RabbitMQ broker (real rabbitmq-server)', { timeout: 60_000 }, () => {
  it('publishes persistent CloudEvents messages; the handler gets body and headers; ack removes', async () => {
    const names = uniqueNames();
    const queue = `${names.topic}-pullsecret`;
    const publisher = await rabbit(names);
    await publisher.publish(Buffer.from('{"probe":1}'), { source: 'test' });
    const channel = await admin.createChannel();
    const raw = await channel.get(queue, { noAck: true });
    await channel.close();
    assert.ok(raw !== false);
    assert.equal(raw.properties.deliveryMode, 2);
    assert.equal(raw.properties.contentType, 'application/cloudevents+json');

    const consumer = await rabbit(names);
    const { seen, handler } = recorder();
    await consumer.start(handler);
    assert.equal(consumer.isReady(), true);
    await publisher.publish(Buffer.from('{"n":1}'), { 'ce-type': 'x' });
    await publisher.publish(Buffer.from('{"n":2}'));
    await eventually('two deliveries', () => seen.length === 2);
    assert.deepEqual(seen.map((m) => m.body.toString()).sort(), ['{"n":1}', '{"n":2}']);
    assert.equal(seen.find((m) => m.body.toString() === '{"n":1}')?.attributes['ce-type'], 'x');
    assert.ok(seen.every((m) => m.deliveryAttempt === 1 && m.id.length > 0));
    await consumer.stop();
    assert.equal(consumer.isReady(), false);
    assert.equal(await queueDepth(queue), 0);
  });

  it('redelivers on retry after the retry delay, with a higher deliveryAttempt', async () => {
    const broker = await rabbit(uniqueNames());
    const times: number[] = [];
    const { seen, handler } = recorder((m) => (times.push(Date.now()), m.deliveryAttempt === 1 ? 'retry' : 'ack'));
    await broker.start(handler);
    await broker.publish(Buffer.from('again'));
    await eventually('a redelivery', () => seen.length === 2);
    assert.deepEqual(seen.map((m) => m.deliveryAttempt), [1, 2]);
    assert.ok((times[1] ?? 0) - (times[0] ?? 0) >= 180, 'held for the retry delay before requeueing');
  });

  it('dead-letters a rejected message to {queue}.dlq and passes a malformed body through untouched', async () => {
    const names = uniqueNames();
    const broker = await rabbit(names);
    const malformed = Buffer.from([0xff, 0x00, 0x7b, 0x6e, 0x6f, 0x74]);
    const { seen, handler } = recorder(() => 'reject');
    await broker.start(handler);
    await broker.publish(malformed, { reason: 'bad' });
    await eventually('the delivery', () => seen.length === 1);
    assert.deepEqual(seen[0]?.body, malformed);
    const letter = await getOne(`${names.topic}-pullsecret.dlq`);
    assert.deepEqual(letter.content, malformed);
    assert.equal(letter.properties.headers?.reason, 'bad');
    assert.equal(letter.properties.headers?.['x-first-death-reason'], 'rejected');
    assert.equal(await queueDepth(`${names.topic}-pullsecret`), 0);
  });

  it('shares one queue between consumers with the same subscription id (each message handled once)', async () => {
    const names = uniqueNames();
    const slow = async (): Promise<Disposition> => (await sleep(15), 'ack');
    const a = recorder(slow);
    const b = recorder(slow);
    await (await rabbit(names, { maxInFlight: 2 })).start(a.handler);
    await (await rabbit(names, { maxInFlight: 2 })).start(b.handler);
    const publisher = await rabbit(names);
    const count = 40;
    for (let i = 0; i < count; i++) await publisher.publish(Buffer.from(`m${i}`));
    await eventually('all messages', () => a.seen.length + b.seen.length >= count);
    await sleep(200);
    const bodies = [...a.seen, ...b.seen].map((m) => m.body.toString());
    assert.equal(bodies.length, count, 'no message handled twice');
    assert.equal(new Set(bodies).size, count);
    assert.ok(a.seen.length > 0 && b.seen.length > 0, `both consumers work (${a.seen.length}/${b.seen.length})`);
  });

  it('refuses a queue that exists with other arguments (CONFIG_INVALID)', async () => {
    const names = uniqueNames();
    const channel = await admin.createChannel();
    await channel.assertQueue(`${names.topic}-pullsecret`, { durable: false });
    await channel.close();
    const broker = await rabbit(names);
    await assert.rejects(broker.start(async () => 'ack'), { code: 'CONFIG_INVALID' });
  });

  it('stop drains in-flight work and leaves unfinished messages unacked for the next consumer', async () => {
    const names = uniqueNames();
    const first = await rabbit(names);
    const seen: InboundMessage[] = [];
    let aborted = false;
    await first.start(async (m, signal) => {
      seen.push(m);
      if (m.body.toString() === 'finishes') return sleep(100).then(() => 'ack' as const);
      // Hangs until the drain time is over; its late 'ack' must not count.
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
    await (await rabbit(names)).start(next.handler);
    await eventually('the redelivery', () => next.seen.length === 1);
    await sleep(300);
    assert.deepEqual(next.seen.map((m) => [m.body.toString(), m.deliveryAttempt]), [['hangs', 2]]);
  });

  it('survives a broker restart: reconnects, re-declares, and handles messages from before and after', async () => {
    const names = uniqueNames();
    const broker = await rabbit(names, { maxInFlight: 2 });
    const handled = new Set<string>();
    await broker.start(async (m) => {
      await sleep(25);
      handled.add(m.body.toString());
      return 'ack';
    });
    for (let i = 0; i < 20; i++) await broker.publish(Buffer.from(`before-${i}`));
    let sawNotReady = false;
    const watch = setInterval(() => (sawNotReady ||= !broker.isReady()), 10);
    await server.restart();
    await eventually('ready again', () => broker.isReady(), 20_000);
    clearInterval(watch);
    assert.equal(sawNotReady, true, 'isReady() went false while disconnected');
    for (let i = 0; i < 10; i++) await broker.publish(Buffer.from(`after-${i}`));
    await eventually('every message handled', () => handled.size === 30, 20_000);
  });
});
