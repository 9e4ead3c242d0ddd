import type { Channel } from 'amqplib';
import type { RabbitMqBrokerConfig } from './config.js';

/**
 * Routing key `publish` uses: the binding key when it is a plain key, else `""` (which `#` also
 * matches). Upstream binds and publishes with `""`.
 */
export function publishRoutingKey(bindingKey: string): string {
  return /[*#]/.test(bindingKey) ? '' : bindingKey;
}

/** How the consumed queue is declared. */
export interface QueueSettings {
  readonly bindingKey: string;
  readonly queueType: 'quorum' | 'classic';
  readonly maxDeliveries: number;
}

/**
 * Arguments of the consumed queue. A quorum queue's `x-delivery-limit` counts redeliveries (the
 * first delivery is not one), so `maxDeliveries` deliveries in all.
 */
export function queueArguments(settings: Pick<QueueSettings, 'queueType' | 'maxDeliveries'>): Record<string, unknown> {
  return settings.queueType === 'quorum' ? { 'x-queue-type': 'quorum', 'x-delivery-limit': settings.maxDeliveries - 1 } : {};
}

/** Names of everything the broker declares. */
export interface RabbitMqTopology {
  /** Durable `topic` exchange the Sentinel publishes to. */
  readonly exchange: string;
  /** Durable queue `{topic}-{subscriptionId}`: one per subscription, shared by its replicas. */
  readonly queue: string;
  /** Durable `direct` exchange `{exchange}.dlx` that rejected messages go to. */
  readonly deadLetterExchange: string;
  /** Durable queue `{queue}.dlq`, bound to the dead-letter exchange with the queue's name. */
  readonly deadLetterQueue: string;
}

/** Derives the topology names from the settings (pure). */
export function topologyNames(config: Pick<RabbitMqBrokerConfig, 'exchange' | 'topic' | 'subscriptionId'>): RabbitMqTopology {
  const queue = `${config.topic}-${config.subscriptionId}`;
  return {
    exchange: config.exchange,
    queue,
    deadLetterExchange: `${config.exchange}.dlx`,
    deadLetterQueue: `${queue}.dlq`,
  };
}

/**
 * Declares the topology (idempotent; run on every connect, so a broker that lost its definitions gets
 * them back). The dead-letter queue stays classic whatever the queue type: nothing is retried there. Dead-lettered messages keep the queue's name as routing key so that several
 * subscriptions sharing one dead-letter exchange each get only their own rejects.
 *
 * @throws the channel error when something exists with other settings (406 PRECONDITION_FAILED).
 */
export async function declareTopology(channel: Channel, names: RabbitMqTopology, settings: QueueSettings): Promise<void> {
  await channel.assertExchange(names.exchange, 'topic', { durable: true });
  await channel.assertExchange(names.deadLetterExchange, 'direct', { durable: true });
  await channel.assertQueue(names.deadLetterQueue, { durable: true });
  await channel.bindQueue(names.deadLetterQueue, names.deadLetterExchange, names.queue);
  await channel.assertQueue(names.queue, {
    durable: true,
    deadLetterExchange: names.deadLetterExchange,
    deadLetterRoutingKey: names.queue,
    arguments: queueArguments(settings),
  });
  await channel.bindQueue(names.queue, names.exchange, settings.bindingKey);
}
