import type { Channel, ChannelModel } from 'amqplib';
import type { RabbitMqBrokerConfig } from './config.js';
import { replyCode } from './errors.js';

/**
 * Routing key `publish` uses: `routingKey` when set, else the binding key when it is a plain key,
 * else `""` (which `#` also matches). The library publishes with `""` unless `routing_key` is set.
 */
export function publishRoutingKey(settings: Pick<RabbitMqBrokerConfig, 'bindingKey' | 'routingKey'>): string {
  if (settings.routingKey !== undefined) return settings.routingKey;
  return /[*#]/.test(settings.bindingKey) ? '' : settings.bindingKey;
}

/** How missing parts of the topology are declared. */
type TopologySettings = Pick<RabbitMqBrokerConfig, 'bindingKey' | 'exchangeType' | 'queueType'>;

/**
 * Arguments of a queue the broker declares: none, as HyperFleet's broker library declares it, unless
 * the configuration asks for a quorum queue. Delivery limits and dead-lettering need no argument: the
 * broker counts deliveries and publishes dead letters itself (rabbitmq-broker.ts).
 */
export function queueArguments(settings: Pick<TopologySettings, 'queueType'>): Record<string, unknown> {
  return settings.queueType === 'quorum' ? { 'x-queue-type': 'quorum' } : {};
}

/** Names of everything the broker uses. */
export interface RabbitMqTopology {
  /** Durable exchange the Sentinel publishes to. */
  readonly exchange: string;
  /** Durable queue `{queue or topic}-{subscriptionId}`: one per subscription, shared by its replicas. */
  readonly queue: string;
  /** Durable queue `{queue}.dlq` the broker publishes dead letters to (declared when the first one comes). */
  readonly deadLetterQueue: string;
}

/** Derives the topology names from the settings (pure), as hyperfleet-broker names the queue. */
export function topologyNames(
  config: Pick<RabbitMqBrokerConfig, 'exchange' | 'topic' | 'queue' | 'subscriptionId'>,
): RabbitMqTopology {
  const queue = `${config.queue ?? config.topic}-${config.subscriptionId}`;
  return { exchange: config.exchange, queue, deadLetterQueue: `${queue}.dlq` };
}

/**
 * Whether an exchange or queue exists: a passive declare on a throwaway channel, since a failed
 * passive declare closes its channel (404 NOT_FOUND). @throws any other refusal (403, 530).
 */
async function exists(connection: ChannelModel, kind: 'exchange' | 'queue', name: string): Promise<boolean> {
  const channel = await connection.createChannel();
  channel.on('error', () => undefined);
  try {
    await (kind === 'exchange' ? channel.checkExchange(name) : channel.checkQueue(name));
  } catch (err) {
    if (replyCode(err) === 404) return false;
    throw err;
  } finally {
    await channel.close().catch(() => undefined);
  }
  return true;
}

/** Declares a durable queue with no arguments unless it exists (then it is used as it is). */
export async function ensurePlainQueue(connection: ChannelModel, name: string): Promise<void> {
  if (await exists(connection, 'queue', name)) return;
  const channel = await connection.createChannel();
  channel.on('error', () => undefined);
  try {
    await channel.assertQueue(name, { durable: true });
  } finally {
    await channel.close().catch(() => undefined);
  }
}

/** Deletes what a failed start declared, on a channel of its own (the failure closed the other one). */
async function rollBack(
  connection: ChannelModel,
  created: { exchange?: string; queue?: string },
): Promise<void> {
  const channel = await connection.createChannel().catch(() => undefined);
  if (channel === undefined) return;
  channel.on('error', () => undefined);
  try {
    if (created.queue !== undefined) await channel.deleteQueue(created.queue, { ifEmpty: true });
    if (created.exchange !== undefined) await channel.deleteExchange(created.exchange, { ifUnused: false });
  } catch {
    // Best effort: the connection may be gone as well.
  } finally {
    await channel.close().catch(() => undefined);
  }
}

/**
 * Makes sure the exchange, the queue and its binding exist (run on every connect, so a broker that
 * lost its definitions gets them back). An existing exchange (any type) or queue (any arguments) is
 * used as it is, checked with passive declares; a missing one is declared as HyperFleet's broker
 * library declares it. A failure deletes what this call declared, so a failed start leaves nothing.
 *
 * @returns what was declared (for the log).
 * @throws the channel error when RabbitMQ refuses (403 ACCESS_REFUSED, 406 PRECONDITION_FAILED).
 */
export async function declareTopology(
  connection: ChannelModel,
  channel: Channel,
  names: RabbitMqTopology,
  settings: TopologySettings,
): Promise<{ exchange: boolean; queue: boolean }> {
  const exchangeExists = await exists(connection, 'exchange', names.exchange);
  const queueExists = await exists(connection, 'queue', names.queue);
  const created: { exchange?: string; queue?: string } = {};
  try {
    if (!exchangeExists) {
      await channel.assertExchange(names.exchange, settings.exchangeType, { durable: true });
      created.exchange = names.exchange;
    }
    if (!queueExists) {
      await channel.assertQueue(names.queue, { durable: true, arguments: queueArguments(settings) });
      created.queue = names.queue;
    }
    await channel.bindQueue(names.queue, names.exchange, settings.bindingKey);
  } catch (err) {
    await rollBack(connection, created);
    throw err;
  }
  return { exchange: !exchangeExists, queue: !queueExists };
}
