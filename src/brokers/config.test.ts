import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PullSecretError } from '../errors/index.js';
import { parseBrokerConfig } from './config.js';

function problems(input: unknown): string {
  try {
    parseBrokerConfig(input);
  } catch (err) {
    assert.ok(err instanceof PullSecretError);
    assert.equal(err.code, 'CONFIG_INVALID');
    return err.message;
  }
  assert.fail('expected CONFIG_INVALID');
}

const rabbit = {
  type: 'rabbitmq',
  url: 'amqp://user:pw@mq.example:5672/',
  exchange: 'hyperfleet',
  topic: 'clusters',
  subscriptionId: 'pullsecret',
};
const pubsub = {
  type: 'pubsub',
  projectId: 'my-project',
  topic: 'clusters',
  subscriptionId: 'pullsecret-adapter',
};

describe('parseBrokerConfig', () => {
  it('applies the embedded defaults and freezes the result', () => {
    const config = parseBrokerConfig({ type: 'embedded' });
    assert.deepEqual(config, {
      type: 'embedded',
      maxInFlight: 8,
      maxDeliveries: 10,
      retryDelayMs: 100,
      retryMaxDelayMs: 5000,
    });
    assert.ok(Object.isFrozen(config));
  });

  it('parses RabbitMQ settings, numbers given as text', () => {
    const config = parseBrokerConfig({ ...rabbit, maxInFlight: '16' });
    assert.equal(config.type, 'rabbitmq');
    assert.equal(config.type === 'rabbitmq' && config.maxInFlight, 16);
    assert.equal(config.type === 'rabbitmq' && config.reconnectMaxDelayMs, 30_000);
    assert.deepEqual(
      config.type === 'rabbitmq' && [
        config.bindingKey,
        config.exchangeType,
        config.queueType,
        config.maxDeliveries,
      ],
      ['', 'topic', undefined, 10],
    );
  });

  it('takes a RabbitMQ binding key pattern and queue type, refusing others', () => {
    const config = parseBrokerConfig({
      ...rabbit,
      bindingKey: '#',
      queueType: 'classic',
      maxDeliveries: '3',
    });
    assert.deepEqual(
      config.type === 'rabbitmq' && [config.bindingKey, config.queueType, config.maxDeliveries],
      ['#', 'classic', 3],
    );
    assert.match(
      problems({ ...rabbit, bindingKey: 'a b' }),
      /invalid broker setting bindingKey: must be a topic binding key/,
    );
    assert.match(problems({ ...rabbit, queueType: 'stream' }), /invalid broker setting queueType/);
    assert.match(problems({ ...rabbit, maxDeliveries: 0 }), /invalid broker setting maxDeliveries/);
  });

  it('parses Pub/Sub settings with defaults, flags given as text', () => {
    const config = parseBrokerConfig({ ...pubsub, createIfMissing: 'false', apiEndpoint: '127.0.0.1:8085' });
    assert.ok(config.type === 'pubsub');
    assert.equal(config.createIfMissing, false);
    assert.equal(config.maxDeliveryAttempts, 10);
    assert.equal(config.apiEndpoint, '127.0.0.1:8085');
  });

  it('names an unknown broker type', () => {
    assert.match(
      problems({ type: 'kafka' }),
      /invalid broker setting type: must be one of embedded, rabbitmq, pubsub/,
    );
    assert.match(problems({}), /invalid broker setting type/);
  });

  it('reports every problem by field, never echoing the URL (it may hold a password)', () => {
    const message = problems({
      ...rabbit,
      url: 'http://user:s3cr3t@host/',
      exchange: 'amq.topic',
      maxInFlight: 0,
    });
    assert.match(message, /invalid broker setting url: must be an amqp:\/\/ or amqps:\/\/ URL/);
    assert.match(message, /invalid broker setting exchange: must not start with "amq\."/);
    assert.match(message, /invalid broker setting maxInFlight/);
    assert.ok(!message.includes('s3cr3t'));
  });

  it('refuses unknown keys and out-of-range Pub/Sub values', () => {
    assert.match(problems({ type: 'embedded', maxInflight: 3 }), /maxInflight/);
    assert.match(
      problems({ ...pubsub, maxDeliveryAttempts: 4 }),
      /invalid broker setting maxDeliveryAttempts/,
    );
    assert.match(
      problems({ ...pubsub, subscriptionId: 'goog-sub' }),
      /invalid broker setting subscriptionId/,
    );
    assert.match(
      problems({ ...pubsub, retryMinBackoffSeconds: 20, retryMaxBackoffSeconds: 10 }),
      /retryMinBackoffSeconds must not exceed/,
    );
  });
});
