import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ConsumeMessage } from 'amqplib';
import { deliveryAttemptOf, headersToAttributes, toInboundMessage } from './message.js';
import { publishRoutingKey, queueArguments, topologyNames } from './topology.js';
import { brokerAddress } from './config.js';
import { classifyConnectError } from './errors.js';

function message(fields: Partial<ConsumeMessage['fields']>, properties: Partial<ConsumeMessage['properties']>): ConsumeMessage {
  return {
    content: Buffer.from('body'),
    fields: { deliveryTag: 7, redelivered: false, exchange: 'x', routingKey: '', consumerTag: 'c', ...fields },
    properties: { headers: undefined, messageId: undefined, ...properties } as ConsumeMessage['properties'],
  };
}

describe('RabbitMQ message mapping', () => {
  it('turns typed headers into strings', () => {
    assert.deepEqual(headersToAttributes({ s: 'a', n: 3, b: true, buf: Buffer.from('x'), nested: { k: 1 }, none: null }), {
      s: 'a',
      n: '3',
      b: 'true',
      buf: 'x',
      nested: '{"k":1}',
    });
    assert.deepEqual(headersToAttributes(undefined), {});
  });

  it('derives the delivery attempt from x-delivery-count, else from the redelivered flag', () => {
    assert.equal(deliveryAttemptOf(message({}, {})), 1);
    assert.equal(deliveryAttemptOf(message({ redelivered: true }, {})), 2);
    assert.equal(deliveryAttemptOf(message({ redelivered: true }, { headers: { 'x-delivery-count': 4 } })), 5);
  });

  it('uses the message id when present, else the delivery tag', () => {
    assert.equal(toInboundMessage(message({}, { messageId: 'm-1' })).id, 'm-1');
    const inbound = toInboundMessage(message({}, {}));
    assert.equal(inbound.id, '7');
    assert.equal(inbound.body.toString(), 'body');
    assert.ok(Object.isFrozen(inbound.attributes));
  });
});

describe('RabbitMQ names and errors', () => {
  it('derives the documented topology names', () => {
    assert.deepEqual(topologyNames({ exchange: 'hyperfleet', topic: 'clusters', subscriptionId: 'pullsecret' }), {
      exchange: 'hyperfleet',
      queue: 'clusters-pullsecret',
      deadLetterExchange: 'hyperfleet.dlx',
      deadLetterQueue: 'clusters-pullsecret.dlq',
    });
  });

  it('declares quorum queues with x-delivery-limit counting redeliveries, classic ones without', () => {
    assert.deepEqual(queueArguments({ queueType: 'quorum', maxDeliveries: 10 }), { 'x-queue-type': 'quorum', 'x-delivery-limit': 9 });
    assert.deepEqual(queueArguments({ queueType: 'classic', maxDeliveries: 10 }), {});
  });

  it('publishes with a plain binding key, else with ""', () => {
    assert.equal(publishRoutingKey(''), '');
    assert.equal(publishRoutingKey('clusters'), 'clusters');
    assert.equal(publishRoutingKey('#'), '');
    assert.equal(publishRoutingKey('clusters.*'), '');
  });

  it('shows host:port, never credentials', () => {
    assert.equal(brokerAddress('amqp://u:secret@mq.example/vhost'), 'mq.example:5672');
    assert.equal(brokerAddress('amqps://mq.example:1234'), 'mq.example:1234');
  });

  it('classifies refusals as CONFIG_INVALID and the rest as BROKER_UNAVAILABLE', () => {
    assert.equal(classifyConnectError(Object.assign(new Error('PRECONDITION_FAILED'), { code: 406 }), 'h:1').code, 'CONFIG_INVALID');
    assert.equal(classifyConnectError(new Error('Handshake terminated by server: 403 (ACCESS-REFUSED) with message "x"'), 'h:1').code, 'CONFIG_INVALID');
    const down = classifyConnectError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'h:1');
    assert.equal(down.code, 'BROKER_UNAVAILABLE');
    assert.equal(down.retryable, true);
  });
});
