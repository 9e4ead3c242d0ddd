import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ConsumeMessage } from 'amqplib';
import {
  copyHeaders,
  copyProperties,
  deliveryAttemptOf,
  DELIVERIES_HEADER,
  headersToAttributes,
  isUncountedRedelivery,
  toInboundMessage,
} from './message.js';
import { publishRoutingKey, queueArguments, topologyNames } from './topology.js';
import { brokerAddress } from './config.js';
import { classifyConnectError } from './errors.js';

function message(
  fields: Partial<ConsumeMessage['fields']>,
  properties: Partial<ConsumeMessage['properties']>,
): ConsumeMessage {
  return {
    content: Buffer.from('body'),
    fields: {
      deliveryTag: 7,
      redelivered: false,
      exchange: 'x',
      routingKey: '',
      consumerTag: 'c',
      ...fields,
    },
    properties: { headers: undefined, messageId: undefined, ...properties } as ConsumeMessage['properties'],
  };
}

describe('RabbitMQ message mapping', () => {
  it('turns typed headers into strings', () => {
    assert.deepEqual(
      headersToAttributes({ s: 'a', n: 3, b: true, buf: Buffer.from('x'), nested: { k: 1 }, none: null }),
      {
        s: 'a',
        n: '3',
        b: 'true',
        buf: 'x',
        nested: '{"k":1}',
      },
    );
    assert.deepEqual(headersToAttributes(undefined), {});
  });

  it('derives the delivery attempt from its own count, x-delivery-count, else the redelivered flag', () => {
    assert.equal(deliveryAttemptOf(message({}, {})), 1);
    assert.equal(deliveryAttemptOf(message({ redelivered: true }, {})), 2);
    assert.equal(
      deliveryAttemptOf(message({ redelivered: true }, { headers: { 'x-delivery-count': 4 } })),
      5,
    );
    assert.equal(deliveryAttemptOf(message({}, { headers: { [DELIVERIES_HEADER]: 3 } })), 4);
    assert.equal(
      deliveryAttemptOf(
        message({ redelivered: true }, { headers: { [DELIVERIES_HEADER]: 3, 'x-delivery-count': 2 } }),
      ),
      6,
    );
  });

  it('tells a redelivery the queue did not count (classic) from one it counted (quorum)', () => {
    assert.equal(isUncountedRedelivery(message({ redelivered: true }, {})), true);
    assert.equal(
      isUncountedRedelivery(message({ redelivered: true }, { headers: { 'x-delivery-count': 1 } })),
      false,
    );
    assert.equal(isUncountedRedelivery(message({}, {})), false);
  });

  it("a re-published copy keeps headers and properties, not the queue's own count", () => {
    const original = message(
      {},
      {
        headers: { kind: 'poison', 'x-delivery-count': 2 },
        messageId: 'm-1',
        contentType: 'application/json',
        userId: 'guest',
      },
    );
    assert.deepEqual(copyHeaders(original, { [DELIVERIES_HEADER]: 3 }), {
      kind: 'poison',
      [DELIVERIES_HEADER]: 3,
    });
    assert.deepEqual(copyProperties(original), {
      persistent: true,
      messageId: 'm-1',
      contentType: 'application/json',
    });
    assert.deepEqual(
      toInboundMessage(message({}, { headers: { kind: 'x', [DELIVERIES_HEADER]: 1 } })).attributes,
      { kind: 'x' },
    );
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
    assert.deepEqual(
      topologyNames({ exchange: 'hyperfleet', topic: 'clusters', subscriptionId: 'pullsecret' }),
      {
        exchange: 'hyperfleet',
        queue: 'clusters-pullsecret',
        deadLetterQueue: 'clusters-pullsecret.dlq',
      },
    );
    // The library's `rabbitmq.queue` is the base of the queue name when set.
    assert.equal(
      topologyNames({
        exchange: 'e',
        topic: 'clusters',
        queue: 'ns-clusters-pullsecret',
        subscriptionId: 'pullsecret',
      }).queue,
      'ns-clusters-pullsecret-pullsecret',
    );
  });

  it('declares a missing queue with no arguments, as the library does, unless quorum is asked for', () => {
    assert.deepEqual(queueArguments({}), {});
    assert.deepEqual(queueArguments({ queueType: 'classic' }), {});
    assert.deepEqual(queueArguments({ queueType: 'quorum' }), { 'x-queue-type': 'quorum' });
  });

  it('publishes with routingKey, else a plain binding key, else ""', () => {
    assert.equal(publishRoutingKey({ bindingKey: '' }), '');
    assert.equal(publishRoutingKey({ bindingKey: 'clusters' }), 'clusters');
    assert.equal(publishRoutingKey({ bindingKey: '#' }), '');
    assert.equal(publishRoutingKey({ bindingKey: 'clusters.*' }), '');
    assert.equal(
      publishRoutingKey({ bindingKey: '', routingKey: 'clusters.reconcile' }),
      'clusters.reconcile',
    );
  });

  it('shows host:port, never credentials', () => {
    assert.equal(brokerAddress('amqp://u:secret@mq.example/vhost'), 'mq.example:5672');
    assert.equal(brokerAddress('amqps://mq.example:1234'), 'mq.example:1234');
  });

  it('classifies refusals as CONFIG_INVALID and the rest as BROKER_UNAVAILABLE', () => {
    assert.equal(
      classifyConnectError(Object.assign(new Error('PRECONDITION_FAILED'), { code: 406 }), 'h:1').code,
      'CONFIG_INVALID',
    );
    assert.equal(
      classifyConnectError(
        new Error('Handshake terminated by server: 403 (ACCESS-REFUSED) with message "x"'),
        'h:1',
      ).code,
      'CONFIG_INVALID',
    );
    const down = classifyConnectError(
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'h:1',
    );
    assert.equal(down.code, 'BROKER_UNAVAILABLE');
    assert.equal(down.retryable, true);
  });
});
