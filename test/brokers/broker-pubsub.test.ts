import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PubSub, type Message } from '@google-cloud/pubsub';
import type { Broker } from '../../src/brokers/broker.js';
import { Writable } from 'node:stream';
import { createBroker } from '../../src/brokers/registry.js';
import { createLogger } from '../../src/observability/logger.js';
import { eventually, recorder } from '../support/brokers.js';
import { startPubSubEmulator, type PubSubEmulator } from '../support/pubsub-emulator.js';

// Stay on loopback: no metadata server lookups, a fake project.
process.env.METADATA_SERVER_DETECTION = 'none';
process.env.GOOGLE_CLOUD_PROJECT = 'pull-secret-test';

let emulator: PubSubEmulator;
let admin: PubSub;
const brokers: Broker[] = [];

before(
  async () => {
    emulator = await startPubSubEmulator();
    process.env.PUBSUB_EMULATOR_HOST = emulator.host;
    admin = new PubSub({ projectId: 'pull-secret-test' });
  },
  { timeout: 60_000 },
);

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
async function pubsub(
  names: { topic: string; subscriptionId: string },
  extra: Record<string, unknown> = {},
): Promise<Broker> {
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

describe('Pub/Sub broker (real emulator)', { timeout: 60_000 }, () => {
  it('creates the topology with a dead-letter policy of maxDeliveryAttempts (default 10)', async () => {
    const names = uniqueNames();
    const broker = await pubsub(names, { apiEndpoint: emulator.host, projectId: 'pull-secret-test' });
    await broker.start(async () => 'ack');
    assert.equal(broker.isReady(), true);
    const [subscription] = await admin.subscription(names.subscriptionId).getMetadata();
    assert.equal(
      subscription.deadLetterPolicy?.deadLetterTopic,
      `projects/pull-secret-test/topics/${names.subscriptionId}-dlq`,
    );
    assert.equal(subscription.deadLetterPolicy?.maxDeliveryAttempts, 10);
    const [dlq] = await admin.subscription(`${names.subscriptionId}-dlq`).getMetadata();
    assert.equal(dlq.topic, `projects/pull-secret-test/topics/${names.subscriptionId}-dlq`);
  });

  it('dead-letters a rejected message to {subscriptionId}-dlq with the attributes Pub/Sub itself sets', async () => {
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

  it('createIfMissing off: adopts the subscription the platform created, warns about a missing {subscriptionId}-dlq, and leaves rejects to its dead-letter policy', async () => {
    // As HyperFleet's Terraform creates it: the subscription with its own dead-letter policy on a
    // topic `{topic}-dlq`, no `{subscriptionId}-dlq` topic
    // (https://github.com/openshift-hyperfleet/hyperfleet-infra/blob/main/terraform/modules/pubsub/main.tf).
    const names = uniqueNames();
    const [platformDlq] = await admin.createTopic(`${names.topic}-dlq`);
    const [dlqSubscription] = await platformDlq.createSubscription(`${names.topic}-dlq-sub`);
    const [topic] = await admin.createTopic(names.topic);
    const deadLetterPolicy = { deadLetterTopic: platformDlq.name, maxDeliveryAttempts: 5 };
    await topic.createSubscription(names.subscriptionId, {
      deadLetterPolicy,
      retryPolicy: { minimumBackoff: { seconds: 0 }, maximumBackoff: { seconds: 1 } },
    });
    const lines: string[] = [];
    const logger = createLogger({
      level: 'debug',
      destination: new Writable({
        write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()),
      }),
    });
    const broker = await createBroker(
      { type: 'pubsub', ...names, createIfMissing: false, maxInFlight: 4 },
      { logger },
    );
    brokers.push(broker);
    const { seen, handler } = recorder(() => 'reject');
    await broker.start(handler);
    const warning = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.level === 'warn' && l.dead_letter_topic === `${names.subscriptionId}-dlq`);
    assert.ok(warning, `a warning names the missing topic: ${lines.join('')}`);
    await broker.publish(Buffer.from('poison'));
    const dead: Message[] = [];
    dlqSubscription.on('message', (m: Message) => (dead.push(m), m.ack()));
    await eventually(
      "the dead letter, moved by the subscription's own policy",
      () => dead.length === 1,
      30_000,
    );
    await dlqSubscription.close();
    assert.equal(dead[0]?.data.toString(), 'poison');
    assert.equal(seen.length, 5, 'nacked until the policy moved it');
    const [metadata] = await admin.subscription(names.subscriptionId).getMetadata();
    assert.equal(metadata.deadLetterPolicy?.deadLetterTopic, platformDlq.name, 'adopted as it is');
  });

  it('refuses missing resources when createIfMissing is off (CONFIG_INVALID)', async () => {
    const broker = await pubsub(uniqueNames(), { createIfMissing: false });
    await assert.rejects(
      broker.start(async () => 'ack'),
      { code: 'CONFIG_INVALID', message: /topic "clusters-[0-9a-f]+" does not exist/ },
    );
  });
});
