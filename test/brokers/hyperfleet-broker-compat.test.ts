import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect, type ChannelModel, type GetMessage } from 'amqplib';
import { createBroker } from '../../src/brokers/registry.js';
import type { Broker } from '../../src/brokers/broker.js';
import { startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { eventually } from '../support/brokers.js';
import { declared, startRabbitMq, type RabbitMqServer } from '../support/rabbitmq.js';

/**
 * The adapter on a RabbitMQ topology that HyperFleet's broker library created
 * (https://github.com/openshift-hyperfleet/hyperfleet-broker/blob/main/broker/rabbitmq.go on Watermill's
 * `NewDurablePubSubConfig`, https://github.com/ThreeDotsLabs/watermill-amqp/blob/master/pkg/amqp/config.go):
 * a durable exchange, `fanout` unless `exchange_type` is set (HyperFleet's deployments set `topic`:
 * https://github.com/openshift-hyperfleet/hyperfleet-infra/blob/main/scripts/generate-rabbitmq-values.sh),
 * a durable queue `{queue or topic}-{subscription_id}` declared with no arguments, bound with `""`.
 */

let rabbit: RabbitMqServer;
let admin: ChannelModel;

before(async () => {
  rabbit = await startRabbitMq();
  admin = await connect(rabbit.url);
});
after(async () => {
  await admin?.close().catch(() => undefined);
  await rabbit?.stop();
});

interface LibraryNames {
  readonly exchange: string;
  readonly queueBase: string;
  readonly subscriptionId: string;
  readonly queue: string;
}

function libraryNames(): LibraryNames {
  const id = randomUUID().slice(0, 8);
  const queueBase = `ns-${id}-clusters-pullsecret`;
  return {
    exchange: `ns-${id}-clusters`,
    queueBase,
    subscriptionId: 'pullsecret',
    queue: `${queueBase}-pullsecret`,
  };
}

/** Declares what the library's DefaultTopologyBuilder declares: queue (no arguments), exchange, binding `""`. */
async function declareAsLibrary(names: LibraryNames, exchangeType: 'fanout' | 'topic'): Promise<void> {
  const channel = await admin.createChannel();
  try {
    await channel.assertQueue(names.queue, {
      durable: true,
      autoDelete: false,
      exclusive: false,
      arguments: {},
    });
    await channel.assertExchange(names.exchange, exchangeType, {
      durable: true,
      autoDelete: false,
      internal: false,
      arguments: {},
    });
    await channel.bindQueue(names.queue, names.exchange, '');
  } finally {
    await channel.close();
  }
}

/**
 * Publishes as the library's publisher: the structured CloudEvent JSON as body, Watermill's
 * `_watermill_message_uuid` header, persistent, routing key `""` unless `routing_key` is set
 * (watermill-amqp pkg/amqp/marshaler.go; hyperfleet-broker broker/broker.go `eventToMessage`).
 */
async function publishAsLibrary(exchange: string, body: Buffer, id: string, routingKey = ''): Promise<void> {
  const channel = await admin.createConfirmChannel();
  try {
    channel.publish(exchange, routingKey, body, {
      deliveryMode: 2,
      headers: { _watermill_message_uuid: id },
    });
    await channel.waitForConfirms();
  } finally {
    await channel.close();
  }
}

function cloudEvent(cluster: { id: string; generation: number }): { id: string; body: Buffer } {
  const id = randomUUID();
  const event = {
    specversion: '1.0',
    id,
    source: 'hyperfleet-sentinel',
    type: 'com.redhat.hyperfleet.cluster.reconcile',
    datacontenttype: 'application/json',
    data: {
      id: cluster.id,
      kind: 'Cluster',
      href: `/api/hyperfleet/v1/clusters/${cluster.id}`,
      generation: cluster.generation,
    },
  };
  return { id, body: Buffer.from(JSON.stringify(event)) };
}

const exists = (kind: 'exchange' | 'queue', name: string): Promise<boolean> => declared(admin, kind, name);

async function depth(queue: string): Promise<number> {
  const channel = await admin.createChannel();
  try {
    return (await channel.checkQueue(queue)).messageCount;
  } finally {
    await channel.close();
  }
}

/** The queue still has no arguments: the library's own redeclare (no arguments) is still equivalent. */
async function libraryRedeclareSucceeds(queue: string): Promise<void> {
  const channel = await admin.createChannel();
  await channel.assertQueue(queue, { durable: true, arguments: {} });
  await channel.close();
}

async function getOne(queue: string): Promise<GetMessage> {
  // The broker declares the dead-letter queue with the first dead letter; a get on a missing queue closes the channel.
  await eventually(`${queue} declared`, () => exists('queue', queue));
  const channel = await admin.createChannel();
  try {
    let got: GetMessage | false = false;
    await eventually(
      `a message on ${queue}`,
      async () => (got = await channel.get(queue, { noAck: true })) !== false,
    );
    return got as unknown as GetMessage;
  } finally {
    await channel.close();
  }
}

const available = (s: { conditions: Array<{ type: string; status: string }> }) =>
  s.conditions.some((c) => c.type === 'Available' && c.status === 'True');

for (const exchangeType of ['fanout', 'topic'] as const) {
  describe(`adapter on a ${exchangeType} exchange and queue HyperFleet's broker library declared`, () => {
    const names = libraryNames();
    let stack: AdapterStack;
    before(async () => {
      await declareAsLibrary(names, exchangeType);
      stack = await startAdapterStack({
        broker: {
          type: 'rabbitmq',
          url: rabbit.url,
          exchange: names.exchange,
          exchangeType,
          topic: 'clusters',
          queue: names.queueBase,
          subscriptionId: names.subscriptionId,
          maxDeliveries: 3,
          retryDelayMs: 20,
        },
      });
    });
    after(async () => {
      await stack?.stop();
    });

    test('consumes, processes and acknowledges what the library publishes', async () => {
      const cluster = await stack.seedCluster();
      const { id, body } = cloudEvent(cluster);
      await publishAsLibrary(names.exchange, body, id);
      await stack.waitForStatus(cluster.id, available);
      await eventually('the queue drained (acknowledged)', async () => (await depth(names.queue)) === 0);
      await libraryRedeclareSucceeds(names.queue);
      assert.equal(
        await exists('exchange', `${names.exchange}.dlx`),
        false,
        'no dead-letter exchange declared',
      );
    });

    test('a poison message ends up dead-lettered without any queue argument the library did not set', async () => {
      const poison = Buffer.from('{"not":"a cloudevent"}');
      await publishAsLibrary(names.exchange, poison, randomUUID());
      const letter = await getOne(`${names.queue}.dlq`);
      assert.deepEqual(letter.content, poison);
      assert.equal(letter.properties.headers?.['x-pullsecret-death-reason'], 'rejected');
      await eventually('the queue drained', async () => (await depth(names.queue)) === 0);
      await libraryRedeclareSucceeds(names.queue);
    });
  });
}

describe('start against a queue the library declared', () => {
  const brokers: Broker[] = [];
  after(async () => {
    await Promise.all(brokers.map((b) => b.stop({ drainMs: 100 })));
  });

  for (const queueType of [undefined, 'classic', 'quorum'] as const) {
    test(`queueType ${queueType ?? 'unset'}: the queue is used as it is and nothing is left behind`, async () => {
      const names = libraryNames();
      await declareAsLibrary(names, 'fanout');
      const broker = await createBroker({
        type: 'rabbitmq',
        url: rabbit.url,
        exchange: names.exchange,
        // The queue base from the topic (the library's default naming); `queue` is the other way.
        topic: names.queueBase,
        subscriptionId: names.subscriptionId,
        ...(queueType === undefined ? {} : { queueType }),
      });
      brokers.push(broker);
      await broker.start(async () => 'ack');
      await libraryRedeclareSucceeds(names.queue);
      assert.equal(await exists('exchange', `${names.exchange}.dlx`), false);
      assert.equal(await exists('queue', `${names.queue}.dlq`), false);
    });
  }

  test('a start that fails leaves nothing behind', async () => {
    const names = libraryNames();
    // The exchange exists but cannot take the binding (an internal exchange may not be published to
    // by clients, and binding to it is allowed; a queue whose name is reserved refuses instead).
    const broker = await createBroker({
      type: 'rabbitmq',
      url: rabbit.url,
      exchange: names.exchange,
      topic: 'amq.reserved',
      subscriptionId: 'x',
    });
    brokers.push(broker);
    await assert.rejects(broker.start(async () => 'ack'));
    assert.equal(
      await exists('exchange', names.exchange),
      false,
      'the exchange it declared is removed again',
    );
    assert.equal(await exists('exchange', `${names.exchange}.dlx`), false);
  });
});
