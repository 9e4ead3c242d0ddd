import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PubSub, type Message } from '@google-cloud/pubsub';
import { connect, type ChannelModel } from 'amqplib';
import type { Broker, Disposition, InboundMessage, MessageHandler } from '../../src/brokers/broker.js';
import { createBroker } from '../../src/brokers/registry.js';
import { eventually, recorder } from '../support/brokers.js';
import { startPubSubEmulator, type PubSubEmulator } from '../support/pubsub-emulator.js';
import { declared, startRabbitMq, type RabbitMqServer } from '../support/rabbitmq.js';

// The broker contract (src/brokers/broker.ts), written once and run against every broker: the
// embedded one, a real rabbitmq-server and the real Pub/Sub emulator. Broker-specific behaviour
// (topology names, reconnects, refused settings) stays in test/broker-<kind>.test.ts.

process.env.METADATA_SERVER_DETECTION = 'none';

/** Deliveries of one message before it is dead-lettered, for every broker (Pub/Sub's minimum is 5). */
const MAX_DELIVERIES = 5;

/** One queue / subscription of a broker under test. */
interface Channel {
  /** A consumer (and publisher) on the queue; consumers of one channel compete for its messages. */
  open(extra?: Record<string, unknown>): Promise<Broker>;
  /** Bodies and attributes that reached the dead-letter queue; undefined where there is none (embedded). */
  deadLetters?(expected: number): Promise<Array<{ body: Buffer; attributes: Record<string, string> }>>;
}

interface BrokerUnderTest {
  readonly kind: string;
  /** Several consumer processes can share one queue (not the in-process broker). */
  readonly sharedQueue: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  channel(): Channel;
}

const opened: Broker[] = [];
async function track(broker: Promise<Broker>): Promise<Broker> {
  const b = await broker;
  opened.push(b);
  return b;
}

const embedded: BrokerUnderTest = {
  kind: 'embedded',
  sharedQueue: false,
  start: async () => undefined,
  stop: async () => undefined,
  channel() {
    // One in-process queue: the "next consumer" is the same broker started again.
    let broker: Promise<Broker> | undefined;
    return {
      open: (extra = {}) =>
        (broker ??= track(
          createBroker({
            type: 'embedded',
            maxDeliveries: MAX_DELIVERIES,
            retryDelayMs: 5,
            retryMaxDelayMs: 20,
            ...extra,
          }),
        )),
    };
  },
};

function rabbitMq(): BrokerUnderTest {
  let server: RabbitMqServer;
  let admin: ChannelModel;
  return {
    kind: 'rabbitmq',
    sharedQueue: true,
    async start() {
      server = await startRabbitMq();
      admin = await connect(server.url);
    },
    async stop() {
      await admin?.close().catch(() => undefined);
      await server?.stop();
    },
    channel() {
      const id = randomUUID().slice(0, 8);
      const names = { exchange: `ex-${id}`, topic: `clusters-${id}`, subscriptionId: 'pullsecret' };
      return {
        open: (extra = {}) =>
          track(
            createBroker({
              type: 'rabbitmq',
              url: server.url,
              ...names,
              maxInFlight: 4,
              maxDeliveries: MAX_DELIVERIES,
              retryDelayMs: 20,
              reconnectBaseDelayMs: 100,
              reconnectMaxDelayMs: 1_000,
              ...extra,
            }),
          ),
        async deadLetters(expected) {
          // The broker declares the dead-letter queue with the first dead letter; a get on a missing queue closes the channel.
          const dlq = `${names.topic}-pullsecret.dlq`;
          await eventually('the dead-letter queue', () => declared(admin, 'queue', dlq));
          const channel = await admin.createChannel();
          const letters: Array<{ body: Buffer; attributes: Record<string, string> }> = [];
          try {
            await eventually('the dead letters', async () => {
              const message = await channel.get(dlq, { noAck: true });
              if (message !== false)
                letters.push({
                  body: message.content,
                  attributes: stringHeaders(message.properties.headers),
                });
              return letters.length >= expected;
            });
          } finally {
            await channel.close();
          }
          return letters;
        },
      };
    },
  };
}

function pubSub(): BrokerUnderTest {
  let emulator: PubSubEmulator;
  let admin: PubSub;
  return {
    kind: 'pubsub',
    sharedQueue: true,
    async start() {
      emulator = await startPubSubEmulator();
      admin = new PubSub({ projectId: 'pull-secret-test', apiEndpoint: emulator.host });
    },
    async stop() {
      await admin?.close().catch(() => undefined);
      await emulator?.stop();
    },
    channel() {
      const id = randomUUID().slice(0, 8);
      const names = { topic: `clusters-${id}`, subscriptionId: `pullsecret-${id}` };
      return {
        open: (extra = {}) =>
          track(
            createBroker({
              type: 'pubsub',
              projectId: 'pull-secret-test',
              apiEndpoint: emulator.host,
              ...names,
              maxInFlight: 4,
              maxDeliveryAttempts: MAX_DELIVERIES,
              retryMinBackoffSeconds: 0,
              retryMaxBackoffSeconds: 1,
              ...extra,
            }),
          ),
        async deadLetters(expected) {
          const letters: Message[] = [];
          const dlq = admin.subscription(`${names.subscriptionId}-dlq`);
          dlq.on('message', (m: Message) => (letters.push(m), m.ack()));
          try {
            await eventually('the dead letters', () => letters.length >= expected);
          } finally {
            await dlq.close();
          }
          return letters.map((m) => ({ body: m.data, attributes: { ...m.attributes } }));
        },
      };
    },
  };
}

function stringHeaders(headers: Record<string, unknown> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers ?? {}).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  );
}

/** A handler that hangs until the broker aborts it (drain time over), then answers 'ack' too late. */
function hanging(seen: InboundMessage[]): MessageHandler {
  return async (m, signal) => {
    seen.push(m);
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    return 'ack';
  };
}

/** Time a broker gets to show that something does not happen (no redelivery). */
const QUIET_MS = 1_000;

for (const subject of [embedded, rabbitMq(), pubSub()]) {
  describe(`broker contract: ${subject.kind}`, { timeout: 120_000 }, () => {
    before(() => subject.start(), { timeout: 60_000 });
    after(async () => {
      await Promise.all(opened.splice(0).map((b) => b.stop({ drainMs: 100 })));
      await subject.stop();
    });

    it('delivers body and attributes untouched (also a malformed body); ack removes the message', async () => {
      const channel = subject.channel();
      const broker = await channel.open();
      const { seen, handler } = recorder();
      await broker.start(handler);
      assert.equal(broker.isReady(), true);
      const malformed = Buffer.from([0xff, 0x00, 0x7b, 0x6e]);
      await broker.publish(Buffer.from('{"n":1}'), { 'ce-type': 'x' });
      await broker.publish(malformed);
      await eventually('two deliveries', () => seen.length === 2);
      const first = seen.find((m) => m.body.toString() === '{"n":1}');
      assert.equal(first?.attributes['ce-type'], 'x');
      assert.deepEqual(seen.find((m) => m !== first)?.body, malformed);
      assert.ok(seen.every((m) => m.deliveryAttempt === 1 && m.id.length > 0));
      assert.notEqual(seen[0]?.id, seen[1]?.id);
      await broker.stop();
      assert.equal(broker.isReady(), false);

      const next = recorder();
      await (await channel.open()).start(next.handler);
      await sleep(QUIET_MS);
      assert.equal(next.seen.length, 0, 'acked messages are gone');
    });

    it('keeps a message published before any consumer started until one does', async () => {
      const channel = subject.channel();
      const publisher = await channel.open();
      await publisher.publish(Buffer.from('early'));
      const consumer = await channel.open();
      const { seen, handler } = recorder();
      await consumer.start(handler);
      await eventually('the early message', () => seen.length === 1);
      assert.equal(seen[0]?.body.toString(), 'early');
    });

    it('redelivers on retry and on a thrown error, with a growing deliveryAttempt', async () => {
      const broker = await subject.channel().open();
      const { seen, handler } = recorder((m) => {
        if (m.deliveryAttempt === 2) throw new Error('handler bug');
        return m.deliveryAttempt < 3 ? 'retry' : 'ack';
      });
      await broker.start(handler);
      await broker.publish(Buffer.from('again'));
      await eventually('three deliveries', () => seen.length === 3);
      await sleep(QUIET_MS);
      assert.deepEqual(
        seen.map((m) => m.deliveryAttempt),
        [1, 2, 3],
      );
    });

    it('dead-letters a rejected message at once, body and attributes untouched', async () => {
      const channel = subject.channel();
      const broker = await channel.open();
      const malformed = Buffer.from([0xff, 0x00, 0x7b, 0x6e, 0x6f, 0x74]);
      const { seen, handler } = recorder(() => 'reject');
      await broker.start(handler);
      await broker.publish(malformed, { reason: 'bad' });
      await eventually('the delivery', () => seen.length === 1);
      const letters = await channel.deadLetters?.(1);
      if (letters !== undefined) {
        assert.deepEqual(letters[0]?.body, malformed);
        assert.equal(letters[0]?.attributes.reason, 'bad');
      }
      await sleep(QUIET_MS);
      assert.equal(seen.length, 1, 'a rejected message is not redelivered');
    });

    it(`dead-letters a message that keeps failing after ${MAX_DELIVERIES} deliveries, never redelivered forever`, async () => {
      const channel = subject.channel();
      const broker = await channel.open();
      const { seen, handler } = recorder(() => 'retry');
      await broker.start(handler);
      await broker.publish(Buffer.from('always fails'), { kind: 'poison' });
      await eventually(`${MAX_DELIVERIES} deliveries`, () => seen.length === MAX_DELIVERIES, 60_000);
      const letters = await channel.deadLetters?.(1);
      if (letters !== undefined)
        assert.deepEqual(
          [letters[0]?.body.toString(), letters[0]?.attributes.kind],
          ['always fails', 'poison'],
        );
      await sleep(QUIET_MS);
      assert.deepEqual(
        seen.map((m) => m.deliveryAttempt),
        Array.from({ length: MAX_DELIVERIES }, (_, i) => i + 1),
      );
    });

    it('dead-letters a message whose consumer stops before settling it, after the same number of deliveries', async () => {
      // What a crash loop does: the process dies mid-message, again and again.
      const channel = subject.channel();
      const seen: InboundMessage[] = [];
      for (let round = 1; round <= MAX_DELIVERIES; round++) {
        const consumer = await channel.open();
        await consumer.start(hanging(seen));
        if (round === 1) await consumer.publish(Buffer.from('kills its consumer'));
        await eventually(`delivery ${round}`, () => seen.length === round, 60_000);
        await consumer.stop({ drainMs: 20 });
      }
      assert.deepEqual(
        seen.map((m) => m.deliveryAttempt),
        Array.from({ length: MAX_DELIVERIES }, (_, i) => i + 1),
      );
      // The next process starts: it must not get the message (Pub/Sub dead-letters it on the next pull).
      const next = recorder();
      await (await channel.open()).start(next.handler);
      const letters = await channel.deadLetters?.(1);
      if (letters !== undefined) assert.equal(letters[0]?.body.toString(), 'kills its consumer');
      await sleep(QUIET_MS);
      assert.equal(next.seen.length, 0, 'not delivered again');
    });

    it('stop drains in-flight work, then aborts the rest and leaves it for the next consumer', async () => {
      const channel = subject.channel();
      const first = await channel.open();
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
      const stopping = first.stop({ drainMs: 400 });
      assert.equal(first.stop(), stopping, 'a second stop returns the same drain');
      await stopping;
      assert.equal(aborted, true);
      assert.equal(first.isReady(), false);

      const next = recorder();
      await (await channel.open()).start(next.handler);
      await eventually('the redelivery', () => next.seen.length >= 1);
      await sleep(QUIET_MS);
      assert.deepEqual(
        next.seen.map((m) => [m.body.toString(), m.deliveryAttempt]),
        [['hangs', 2]],
      );
    });

    it(
      'shares one queue between consumers (each message handled once)',
      { skip: !subject.sharedQueue && 'one process owns the queue' },
      async () => {
        const channel = subject.channel();
        const slow = async (): Promise<Disposition> => (await sleep(15), 'ack');
        const a = recorder(slow);
        const b = recorder(slow);
        await (await channel.open({ maxInFlight: 2 })).start(a.handler);
        await (await channel.open({ maxInFlight: 2 })).start(b.handler);
        const publisher = await channel.open();
        const count = 40;
        for (let i = 0; i < count; i++) {
          // One Pub/Sub publish batch goes to one stream: spread them out to give both consumers a share.
          await publisher.publish(Buffer.from(`m${i}`));
          await sleep(10);
        }
        await eventually('all messages', () => a.seen.length + b.seen.length >= count);
        await sleep(300);
        const bodies = [...a.seen, ...b.seen].map((m) => m.body.toString());
        assert.equal(bodies.length, count, 'no message handled twice');
        assert.equal(new Set(bodies).size, count);
        assert.ok(
          a.seen.length > 0 && b.seen.length > 0,
          `both consumers work (${a.seen.length}/${b.seen.length})`,
        );
      },
    );
  });
}
