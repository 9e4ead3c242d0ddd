import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createBroker } from './registry.js';

// Stay on loopback: the Pub/Sub client must not look for a metadata server.
process.env.METADATA_SERVER_DETECTION = 'none';

describe('createBroker', () => {
  it('builds each kind without any network call', async () => {
    const embedded = await createBroker({ type: 'embedded' });
    assert.equal(embedded.kind, 'embedded');
    // Nothing listens on port 1: building must not connect.
    const rabbit = await createBroker({
      type: 'rabbitmq',
      url: 'amqp://127.0.0.1:1',
      exchange: 'x',
      topic: 't',
      subscriptionId: 's',
    });
    assert.equal(rabbit.kind, 'rabbitmq');
    assert.equal(rabbit.isReady(), false);
    const pubsub = await createBroker({
      type: 'pubsub',
      projectId: 'proj-test',
      topic: 'topic',
      subscriptionId: 'sub',
      apiEndpoint: '127.0.0.1:1',
    });
    assert.equal(pubsub.kind, 'pubsub');
    assert.equal(pubsub.isReady(), false);
    await Promise.all([embedded.stop(), rabbit.stop(), pubsub.stop()]);
  });

  it('refuses invalid settings with CONFIG_INVALID', async () => {
    await assert.rejects(createBroker({ type: 'embedded', maxInFlight: -1 }), { code: 'CONFIG_INVALID' });
  });

  it('reports an unreachable RabbitMQ as BROKER_UNAVAILABLE on start', async () => {
    const rabbit = await createBroker({
      type: 'rabbitmq',
      url: 'amqp://127.0.0.1:1',
      exchange: 'x',
      topic: 't',
      subscriptionId: 's',
      connectTimeoutMs: 500,
    });
    await assert.rejects(
      rabbit.start(async () => 'ack'),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'BROKER_UNAVAILABLE');
        assert.match(err.message, /cannot connect to RabbitMQ at 127\.0\.0\.1:1/);
        return true;
      },
    );
    await rabbit.stop();
  });

  it('reports an unreachable Pub/Sub as BROKER_UNAVAILABLE on start, and may be started again', async () => {
    const pubsub = await createBroker({
      type: 'pubsub',
      projectId: 'proj-test',
      topic: 'topic',
      subscriptionId: 'sub',
      apiEndpoint: '127.0.0.1:1',
      requestTimeoutMs: 500,
    });
    await assert.rejects(
      pubsub.start(async () => 'ack'),
      { code: 'BROKER_UNAVAILABLE', message: /Pub\/Sub is unavailable while reading topic "topic"/ },
    );
    await assert.rejects(
      pubsub.start(async () => 'ack'),
      { code: 'BROKER_UNAVAILABLE' },
    );
    await pubsub.stop();
  });
});
