/**
 * How the RabbitMQ broker settles a delivery: on the channel it came from, by a confirmed
 * re-publish to the back of the queue (a retry, carrying its delivery count), or by a confirmed
 * publish to the dead-letter queue `{queue}.dlq`, each followed by the ack of the original.
 */
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage, Options } from 'amqplib';
import { PullSecretError, describeError } from '../../errors/index.js';
import { classifyConnectError } from './errors.js';
import { copyHeaders, copyProperties, DELIVERIES_HEADER } from './message.js';
import { ensurePlainQueue, type RabbitMqTopology } from './topology.js';

/** Channels of one live connection; replaced as a whole on reconnect. */
export interface Session {
  readonly connection: ChannelModel;
  readonly channel: Channel;
  readonly publisher: ConfirmChannel;
  consuming: boolean;
  consumerTag?: string;
  /** The dead-letter queue, made sure of when the first dead letter comes. */
  deadLetterQueue?: Promise<void>;
}

/** A message handed to the handler, settled on the channel it came from. */
export interface Delivery {
  readonly message: ConsumeMessage;
  readonly session: Session;
}

/** Why a message went to the dead-letter queue (header `x-pullsecret-death-reason`). */
type DeathReason = 'rejected' | 'delivery_limit';

/** The broker's log: constant message, context in fields. */
export type BrokerLog = (
  level: 'debug' | 'info' | 'warn' | 'error',
  fields: Record<string, unknown>,
  message: string,
) => void;

/** What settling needs from the broker. */
export interface SettleContext {
  /** The broker's address for messages (no credentials). */
  readonly address: string;
  readonly names: RabbitMqTopology;
  readonly maxDeliveries: number;
  readonly log: BrokerLog;
}

/** Publishes on the session's confirm channel and waits for the confirm. @throws BROKER_UNAVAILABLE. */
export function confirmedPublish(
  address: string,
  session: Session,
  exchange: string,
  routingKey: string,
  body: Buffer,
  options: Options.Publish,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const fail = (cause: unknown): void =>
      reject(
        new PullSecretError('BROKER_UNAVAILABLE', `RabbitMQ at ${address} did not confirm the message`, {
          cause,
        }),
      );
    try {
      session.publisher.publish(exchange, routingKey, body, options, (err: unknown) =>
        err ? fail(err) : resolve(),
      );
    } catch (err) {
      fail(err);
    }
  });
}

/** Re-publishes a copy carrying `deliveries` to the back of the queue, then acks this one. */
export async function requeue(ctx: SettleContext, delivery: Delivery, deliveries: number): Promise<void> {
  const { message, session } = delivery;
  const options = {
    ...copyProperties(message),
    headers: copyHeaders(message, { [DELIVERIES_HEADER]: deliveries }),
  };
  try {
    await confirmedPublish(ctx.address, session, '', ctx.names.queue, message.content, options);
    settleOn(ctx.log, delivery, (channel, msg) => channel.ack(msg));
  } catch (err) {
    ctx.log(
      'warn',
      { message_id: message.properties.messageId as unknown, ...describeError(err) },
      'broker retry publish failed; message requeued',
    );
    settleOn(ctx.log, delivery, (channel, msg) => channel.nack(msg, false, true));
  }
}

/**
 * Publishes a copy to `{queue}.dlq` (declared when missing), then acks this one; requeues it when
 * that fails.
 */
export async function deadLetter(
  ctx: SettleContext,
  delivery: Delivery,
  reason: DeathReason,
  deliveries: number,
): Promise<void> {
  const { message, session } = delivery;
  const queue = ctx.names.deadLetterQueue;
  const fields = {
    message_id: message.properties.messageId as unknown,
    delivery_attempt: deliveries,
    max_deliveries: ctx.maxDeliveries,
    dead_letter_queue: queue,
  };
  const headers = copyHeaders(message, {
    [DELIVERIES_HEADER]: deliveries,
    'x-pullsecret-death-reason': reason,
    'x-pullsecret-source-queue': ctx.names.queue,
  });
  try {
    session.deadLetterQueue ??= ensurePlainQueue(session.connection, queue);
    await session.deadLetterQueue;
    await confirmedPublish(ctx.address, session, '', queue, message.content, {
      ...copyProperties(message),
      headers,
    });
  } catch (err) {
    session.deadLetterQueue = undefined;
    ctx.log(
      'error',
      { ...fields, ...describeError(classifyConnectError(err, ctx.address)) },
      'broker dead-letter publish failed; message requeued',
    );
    settleOn(ctx.log, delivery, (channel, msg) => channel.nack(msg, false, true));
    return;
  }
  settleOn(ctx.log, delivery, (channel, msg) => channel.ack(msg));
  if (reason === 'rejected') ctx.log('warn', fields, 'broker message rejected; dead-lettered');
  else ctx.log('error', fields, 'broker message dead-lettered after its last delivery attempt');
}

/** Acks or nacks on the delivery's own channel; if that channel died, RabbitMQ already requeued it. */
export function settleOn(
  log: BrokerLog,
  delivery: Delivery,
  settle: (channel: Channel, message: ConsumeMessage) => void,
): void {
  try {
    settle(delivery.session.channel, delivery.message);
  } catch {
    log(
      'debug',
      { message_id: delivery.message.properties.messageId as unknown },
      'broker settle skipped: channel closed; message will be redelivered',
    );
  }
}
