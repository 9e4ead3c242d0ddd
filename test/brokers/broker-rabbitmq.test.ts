import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type ChannelModel, type GetMessage } from 'amqplib';
import type { Broker, InboundMessage } from '../../src/brokers/broker.js';
import { createBroker } from '../../src/brokers/registry.js';
import { eventually, recorder } from '../support/brokers.js';
import { declared, startRabbitMq, type RabbitMqServer } from '../support/rabbitmq.js';

let server: RabbitMqServer;
let admin: ChannelModel;
const brokers: Broker[] = [];

before(
  async () => {
    server = await startRabbitMq();
    admin = await connect(server.url);
  },
  { timeout: 60_000 },
);

after(async () => {
  await Promise.all(brokers.map((b) => b.stop({ drainMs: 100 })));
  await admin?.close().catch(() => undefined);
  await server?.stop();
});

/** A broker on its own exchange / topic (so tests do not see each other's messages). */
async function rabbit(
  names: { exchange: string; topic: string; subscriptionId?: string },
  extra: Record<string, unknown> = {},
): Promise<Broker> {
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

/** Takes one message off `queue`, waiting for it to arrive. */
async function getOne(queue: string): Promise<GetMessage> {
  const channel = await admin.createChannel();
  // A get on a queue not declared yet (the dead-letter queue comes with the first letter) closes the channel.
  await eventually(`${queue} declared`, () => declared(admin, 'queue', queue));
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
  it('publishes persistent CloudEvents messages with a message id', async () => {
    const names = uniqueNames();
    const publisher = await rabbit(names);
    await publisher.publish(Buffer.from('{"probe":1}'), { source: 'test' });
    const raw = await getOne(`${names.topic}-pullsecret`);
    assert.equal(raw.properties.deliveryMode, 2);
    assert.equal(raw.properties.contentType, 'application/cloudevents+json');
    assert.equal(raw.properties.headers?.source, 'test');
    assert.match(String(raw.properties.messageId), /^[0-9a-f-]{36}$/);
  });

  it('holds a message to retry for the retry delay before requeueing it', async () => {
    const broker = await rabbit(uniqueNames());
    const times: number[] = [];
    const { seen, handler } = recorder(
      (m) => (times.push(Date.now()), m.deliveryAttempt === 1 ? 'retry' : 'ack'),
    );
    await broker.start(handler);
    await broker.publish(Buffer.from('again'));
    await eventually('a redelivery', () => seen.length === 2);
    assert.deepEqual(
      seen.map((m) => m.deliveryAttempt),
      [1, 2],
    );
    assert.ok((times[1] ?? 0) - (times[0] ?? 0) >= 180, 'held for the retry delay before requeueing');
  });

  it('dead-letters to {queue}.dlq by publishing there itself, naming why, and declares nothing more', async () => {
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
    assert.equal(letter.properties.headers?.['x-pullsecret-death-reason'], 'rejected');
    assert.equal(letter.properties.headers?.['x-pullsecret-source-queue'], `${names.topic}-pullsecret`);
    assert.equal(await queueDepth(`${names.topic}-pullsecret`), 0);
    assert.equal(
      await declared(admin, 'exchange', `${names.exchange}.dlx`),
      false,
      'no dead-letter exchange',
    );
  });

  it('uses a queue that exists with other settings as it is', async () => {
    const names = uniqueNames();
    const channel = await admin.createChannel();
    await channel.assertQueue(`${names.topic}-pullsecret`, {
      durable: false,
      arguments: { 'x-max-length': 1000 },
    });
    await channel.close();
    const { seen, handler } = recorder();
    const broker = await rabbit(names);
    await broker.start(handler);
    await broker.publish(Buffer.from('on the existing queue'));
    await eventually('the delivery', () => seen.length === 1);
  });

  it('declares a missing exchange with exchangeType (fanout: any routing key reaches the queue)', async () => {
    const names = uniqueNames();
    const { seen, handler } = recorder();
    await (await rabbit(names, { exchangeType: 'fanout' })).start(handler);
    const channel = await admin.createConfirmChannel();
    channel.publish(names.exchange, 'any.key', Buffer.from('fanned out'));
    await channel.waitForConfirms();
    await channel.close();
    await eventually('the delivery', () => seen.length === 1);
  });

  it('binds with routing key "" by default: a message published with another key is dropped by the exchange', async () => {
    const names = uniqueNames();
    const broker = await rabbit(names);
    const { seen, handler } = recorder();
    await broker.start(handler);
    const channel = await admin.createConfirmChannel();
    const returned: string[] = [];
    channel.on('return', (message: { content: Buffer }) => returned.push(message.content.toString()));
    channel.publish(names.exchange, 'clusters.created', Buffer.from('other key'), { mandatory: true });
    channel.publish(names.exchange, '', Buffer.from('empty key'), { mandatory: true });
    await channel.waitForConfirms();
    await eventually('the empty-key message', () => seen.length === 1);
    await sleep(300);
    await channel.close();
    assert.deepEqual(
      seen.map((m) => m.body.toString()),
      ['empty key'],
    );
    // No binding matched: the exchange confirmed and dropped it; only a mandatory publish hears back.
    assert.deepEqual(returned, ['other key']);
    assert.equal(await queueDepth(`${names.topic}-pullsecret`), 0);
  });

  it('bindingKey "#" takes any routing key', async () => {
    const names = uniqueNames();
    const broker = await rabbit(names, { bindingKey: '#' });
    const { seen, handler } = recorder();
    await broker.start(handler);
    const channel = await admin.createConfirmChannel();
    for (const key of ['', 'clusters.created', 'a.b.c'])
      channel.publish(names.exchange, key, Buffer.from(`key=${key}`));
    await channel.waitForConfirms();
    await channel.close();
    await broker.publish(Buffer.from('own publish'));
    await eventually('four messages', () => seen.length === 4);
    assert.deepEqual(seen.map((m) => m.body.toString()).sort(), [
      'key=',
      'key=a.b.c',
      'key=clusters.created',
      'own publish',
    ]);
  });

  it('queueType quorum: counts the deliveries its consumers died on from x-delivery-count, then dead-letters', async () => {
    const names = uniqueNames();
    const seen: InboundMessage[] = [];
    for (let round = 1; round <= 2; round++) {
      const consumer = await rabbit(names, { maxDeliveries: 2, queueType: 'quorum' });
      await consumer.start(async (m, signal) => {
        seen.push(m);
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return 'ack';
      });
      if (round === 1) await consumer.publish(Buffer.from('poison'));
      await eventually(`delivery ${round}`, () => seen.length === round);
      await consumer.stop({ drainMs: 10 });
    }
    const next = recorder();
    await (await rabbit(names, { maxDeliveries: 2, queueType: 'quorum' })).start(next.handler);
    const letter = await getOne(`${names.topic}-pullsecret.dlq`);
    assert.equal(letter.content.toString(), 'poison');
    // Its deliveries were used up, not a handler's reject.
    assert.equal(letter.properties.headers?.['x-pullsecret-death-reason'], 'delivery_limit');
    assert.equal(next.seen.length, 0, 'not handled a third time');
    assert.deepEqual(
      seen.map((m) => m.deliveryAttempt),
      [1, 2],
    );
  });

  it('keeps using a classic queue an earlier version declared with dead-letter arguments, whatever queueType says', async () => {
    const names = uniqueNames();
    const queue = `${names.topic}-pullsecret`;
    // The queue as earlier versions declared it.
    const channel = await admin.createChannel();
    await channel.assertQueue(queue, {
      durable: true,
      deadLetterExchange: `${names.exchange}.dlx`,
      deadLetterRoutingKey: queue,
    });
    channel.sendToQueue(queue, Buffer.from('queued before the upgrade'), { persistent: true });
    await channel.close();
    const { seen, handler } = recorder();
    await (await rabbit(names, { queueType: 'quorum' })).start(handler);
    await eventually('the queued message', () => seen.length === 1);
    assert.equal(seen[0]?.body.toString(), 'queued before the upgrade');
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
