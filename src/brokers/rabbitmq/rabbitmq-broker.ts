import { randomUUID } from 'node:crypto';
import {
  connect,
  type Channel,
  type ChannelModel,
  type ConfirmChannel,
  type ConsumeMessage,
  type Options,
  type RecoveringChannelModel,
} from 'amqplib';
import { PullSecretError, describeError } from '../../errors/index.js';
import { runHandler } from '../run-handler.js';
import type { Logger } from '../../observability/logger.js';
import { backoffDelay, type RetryPolicy } from '../../util/retry.js';
import type { Broker, MessageHandler } from '../broker.js';
import { InFlight } from '../in-flight.js';
import { brokerAddress, type RabbitMqBrokerConfig } from './config.js';
import { classifyConnectError } from './errors.js';
import {
  copyHeaders,
  copyProperties,
  deliveryAttemptOf,
  DELIVERIES_HEADER,
  isUncountedRedelivery,
  priorDeliveries,
  toInboundMessage,
} from './message.js';
import {
  declareTopology,
  ensurePlainQueue,
  publishRoutingKey,
  topologyNames,
  type RabbitMqTopology,
} from './topology.js';

/** Channels of one live connection; replaced as a whole on reconnect. */
interface Session {
  readonly connection: ChannelModel;
  readonly channel: Channel;
  readonly publisher: ConfirmChannel;
  consuming: boolean;
  consumerTag?: string;
  /** The dead-letter queue, made sure of when the first dead letter comes. */
  deadLetterQueue?: Promise<void>;
}

/** A message handed to the handler, settled on the channel it came from. */
interface Delivery {
  readonly message: ConsumeMessage;
  readonly session: Session;
}

const DEFAULT_DRAIN_MS = 10_000;
const CONTENT_TYPE = 'application/cloudevents+json';

/** Why a message went to the dead-letter queue (header `x-pullsecret-death-reason`). */
type DeathReason = 'rejected' | 'delivery_limit';

/**
 * RabbitMQ broker (`amqplib`). Makes sure of the topology on every (re)connect (an existing exchange
 * and queue are used as they are), consumes with prefetch = `maxInFlight`, and settles: 'ack' → ack,
 * 'reject' → dead-lettered, 'retry' → after `retryDelayMs` re-published to the queue with its
 * delivery count, or dead-lettered once it had `maxDeliveries` deliveries. The broker counts
 * deliveries and dead-letters itself (publish to `{queue}.dlq`, confirmed, then ack), so neither
 * needs a queue argument the platform did not set; a redelivery the queue does not count (a classic
 * queue after a consumer died) is counted by re-publishing it. Reconnects with jittered exponential
 * backoff; a handler that finishes after its connection died settles nothing (RabbitMQ redelivers).
 */
export class RabbitMqBroker implements Broker {
  readonly kind = 'rabbitmq';
  private readonly names: RabbitMqTopology;
  private readonly address: string;
  private readonly reconnectPolicy: RetryPolicy;
  private model: RecoveringChannelModel | undefined;
  private connecting: Promise<void> | undefined;
  private session: Session | undefined;
  private handler: MessageHandler | undefined;
  private readonly inFlight = new InFlight<Delivery>();
  private readonly delayed = new Map<NodeJS.Timeout, { delivery: Delivery; release: () => void }>();
  private readonly controller = new AbortController();
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly config: RabbitMqBrokerConfig,
    private readonly options: { logger?: Logger } = {},
  ) {
    this.names = topologyNames(config);
    this.address = brokerAddress(config.url);
    this.reconnectPolicy = {
      maxAttempts: Infinity,
      baseDelayMs: config.reconnectBaseDelayMs,
      maxDelayMs: config.reconnectMaxDelayMs,
    };
  }

  /**
   * Connects, declares the topology and consumes. @throws PullSecretError BROKER_UNAVAILABLE when the
   * first connection fails, CONFIG_INVALID when RabbitMQ refuses the credentials or the topology,
   * INTERNAL when already started or stopped.
   */
  async start(handler: MessageHandler): Promise<void> {
    if (this.handler !== undefined || this.stopping !== undefined)
      throw new PullSecretError('INTERNAL', 'RabbitMQ broker already started or stopped');
    this.handler = handler;
    try {
      await this.connect();
      const session = this.session;
      if (session !== undefined && !session.consuming) await this.consume(session);
    } catch (err) {
      // Not started: the caller may try again.
      this.handler = undefined;
      throw classifyConnectError(err, this.address);
    }
  }

  /**
   * Publishes a persistent message to the exchange (routing key: see `publishRoutingKey`) and waits for the broker's
   * confirm. Connects first when needed. @throws BROKER_UNAVAILABLE while disconnected or when the
   * broker does not confirm; CONFIG_INVALID as `start`.
   */
  async publish(body: Buffer, attributes: Record<string, string> = {}): Promise<void> {
    if (this.stopping !== undefined)
      throw new PullSecretError('BROKER_UNAVAILABLE', 'RabbitMQ broker is stopped');
    await this.connect();
    const session = this.session;
    if (session === undefined)
      throw new PullSecretError(
        'BROKER_UNAVAILABLE',
        `not connected to RabbitMQ at ${this.address} (reconnecting)`,
      );
    const options = {
      persistent: true,
      contentType: CONTENT_TYPE,
      messageId: randomUUID(),
      timestamp: Math.floor(Date.now() / 1000),
      headers: attributes,
    };
    await this.confirmedPublish(session, this.names.exchange, publishRoutingKey(this.config), body, options);
  }

  /** Publishes on the session's confirm channel and waits for the confirm. @throws BROKER_UNAVAILABLE. */
  private confirmedPublish(
    session: Session,
    exchange: string,
    routingKey: string,
    body: Buffer,
    options: Options.Publish,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const fail = (cause: unknown): void =>
        reject(
          new PullSecretError(
            'BROKER_UNAVAILABLE',
            `RabbitMQ at ${this.address} did not confirm the message`,
            { cause },
          ),
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

  isReady(): boolean {
    const session = this.session;
    return (
      this.stopping === undefined &&
      session !== undefined &&
      (this.handler === undefined || session.consumerTag !== undefined)
    );
  }

  /**
   * Cancels the consumer, requeues messages waiting out a retry delay, waits up to `drainMs` for
   * in-flight handlers, then aborts the rest (unacked: RabbitMQ redelivers them) and disconnects.
   */
  stop(options: { drainMs?: number } = {}): Promise<void> {
    this.stopping ??= this.shutdown(options.drainMs ?? DEFAULT_DRAIN_MS);
    return this.stopping;
  }

  private async shutdown(drainMs: number): Promise<void> {
    await this.connecting?.catch(() => undefined);
    const session = this.session;
    if (session?.consumerTag !== undefined) {
      await session.channel.cancel(session.consumerTag).catch(() => undefined);
    }
    for (const [timer, { delivery, release }] of this.delayed) {
      clearTimeout(timer);
      // Requeued by RabbitMQ: the delivery counts as one (x-delivery-count, or an uncounted redelivery).
      this.settleOn(delivery, (channel, message) => channel.nack(message, false, true));
      release();
    }
    this.delayed.clear();
    if (!(await this.inFlight.waitIdle(drainMs))) {
      this.controller.abort(new PullSecretError('ABORTED', 'broker stopping: drain time is over'));
      const abandoned = this.inFlight.abandon();
      this.log(
        'warn',
        { abandoned: abandoned.length },
        'broker drain time over; unfinished messages left unacked for redelivery',
      );
    }
    const model = this.model;
    this.model = undefined;
    this.session = undefined;
    await model?.close().catch(() => undefined);
  }

  private connect(): Promise<void> {
    this.connecting ??= this.openModel().catch((err: unknown) => {
      this.connecting = undefined;
      throw classifyConnectError(err, this.address);
    });
    return this.connecting;
  }

  private async openModel(): Promise<void> {
    const model = await connect(this.config.url, {
      timeout: this.config.connectTimeoutMs,
      clientProperties: { connection_name: `pull-secret ${this.names.queue}` },
      recovery: {
        setup: (connection: ChannelModel) => this.setup(connection),
        calculateDelay: (attempt: number) => backoffDelay(this.reconnectPolicy, attempt),
        // The first failure is reported to the caller of start/publish; recovery covers later losses.
        initialMaxRetries: 0,
      },
    });
    model.on('error', (err: Error) => this.log('warn', { error: err.message }, 'broker connection error'));
    model.on('disconnect', (err: Error) => {
      this.session = undefined;
      this.log('warn', { error: err.message }, 'broker connection lost; reconnecting');
    });
    model.on('reconnect-scheduled', ({ attempt, delay }: { attempt: number; delay: number }) =>
      this.log('info', { attempt, delay_ms: delay }, 'broker reconnect scheduled'),
    );
    model.on('connect-failed', (err: Error) =>
      this.log('warn', describeError(classifyConnectError(err, this.address)), 'broker reconnect failed'),
    );
    model.on('connect', () => this.log('info', {}, 'broker connected'));
    model.on('blocked', (reason: string) =>
      this.log('warn', { reason }, 'broker blocked the connection (resource alarm)'),
    );
    this.model = model;
  }

  /** Runs on every successful connection, before it counts as connected. */
  private async setup(connection: ChannelModel): Promise<void> {
    const channel = await connection.createChannel();
    const publisher = await connection.createConfirmChannel();
    const session: Session = { connection, channel, publisher, consuming: false };
    for (const ch of [channel, publisher]) {
      ch.on('error', (err: Error) => this.log('warn', { error: err.message }, 'broker channel error'));
      ch.on('close', () => this.onChannelClosed(session));
    }
    const declared = await declareTopology(connection, channel, this.names, this.config);
    this.log(
      'info',
      {
        exchange: this.names.exchange,
        queue: this.names.queue,
        exchange_declared: declared.exchange,
        queue_declared: declared.queue,
      },
      'broker topology ready',
    );
    await channel.prefetch(this.config.maxInFlight);
    this.session = session;
    if (this.handler !== undefined && this.stopping === undefined) await this.consume(session);
  }

  /** A channel closed while its connection lives on (e.g. the queue was deleted): start afresh. */
  private onChannelClosed(session: Session): void {
    // Deferred: when the whole connection dies its channels close first, and 'disconnect' handles that.
    setImmediate(() => {
      if (this.session !== session || this.stopping !== undefined) return;
      this.session = undefined;
      this.log('warn', {}, 'broker channel closed; reconnecting');
      session.connection.close().catch(() => undefined);
    });
  }

  private async consume(session: Session): Promise<void> {
    session.consuming = true;
    const reply = await session.channel.consume(
      this.names.queue,
      (message) => this.onMessage(session, message),
      { noAck: false },
    );
    session.consumerTag = reply.consumerTag;
    this.log('info', { queue: this.names.queue, prefetch: this.config.maxInFlight }, 'broker consuming');
  }

  private onMessage(session: Session, message: ConsumeMessage | null): void {
    if (message === null) {
      // The server cancelled the consumer (queue deleted): reconnecting re-declares it.
      session.consumerTag = undefined;
      this.onChannelClosed(session);
      return;
    }
    const delivery: Delivery = { message, session };
    const handler = this.handler;
    if (handler === undefined || this.stopping !== undefined) {
      this.settleOn(delivery, (channel, msg) => channel.nack(msg, false, true));
      return;
    }
    this.inFlight.add(delivery);
    void this.dispatch(delivery, handler).finally(() => this.inFlight.delete(delivery));
  }

  /** Counts a delivery the queue did not, stops one that had all its deliveries, else handles it. */
  private async dispatch(delivery: Delivery, handler: MessageHandler): Promise<void> {
    const { message } = delivery;
    const max = this.config.maxDeliveries;
    if (isUncountedRedelivery(message)) {
      // The consumer before stopped or died on this copy: count that delivery in a fresh copy.
      const deliveries = priorDeliveries(message) + 1;
      await (deliveries >= max
        ? this.deadLetter(delivery, 'delivery_limit', deliveries)
        : this.requeue(delivery, deliveries));
      return;
    }
    const attempt = deliveryAttemptOf(message);
    if (attempt > max) {
      // Counted by the queue (x-delivery-count): its consumers kept dying on it.
      await this.deadLetter(delivery, 'delivery_limit', attempt - 1);
      return;
    }
    await this.handle(delivery, handler);
  }

  private async handle(delivery: Delivery, handler: MessageHandler): Promise<void> {
    const inbound = toInboundMessage(delivery.message);
    const disposition = await runHandler(handler, inbound, this.controller.signal, (fields, text) =>
      this.log('warn', fields, text),
    );
    // Abandoned by a hard stop: leave it unacked so RabbitMQ redelivers it.
    if (!this.inFlight.has(delivery)) return;
    if (disposition === 'ack') {
      this.settleOn(delivery, (channel, message) => channel.ack(message));
    } else if (disposition === 'reject') {
      await this.deadLetter(delivery, 'rejected', inbound.deliveryAttempt);
    } else if (inbound.deliveryAttempt >= this.config.maxDeliveries) {
      await this.deadLetter(delivery, 'delivery_limit', inbound.deliveryAttempt);
    } else if (this.stopping !== undefined) {
      this.settleOn(delivery, (channel, message) => channel.nack(message, false, true));
    } else {
      // Held (still unacked, so it keeps its prefetch slot) so that a failing message does not spin hot.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.delayed.delete(timer);
          void this.requeue(delivery, inbound.deliveryAttempt).finally(resolve);
        }, this.config.retryDelayMs);
        this.delayed.set(timer, { delivery, release: resolve });
      });
    }
  }

  /** Re-publishes a copy carrying `deliveries` to the back of the queue, then acks this one. */
  private async requeue(delivery: Delivery, deliveries: number): Promise<void> {
    const { message, session } = delivery;
    const options = {
      ...copyProperties(message),
      headers: copyHeaders(message, { [DELIVERIES_HEADER]: deliveries }),
    };
    try {
      await this.confirmedPublish(session, '', this.names.queue, message.content, options);
      this.settleOn(delivery, (channel, msg) => channel.ack(msg));
    } catch (err) {
      this.log(
        'warn',
        { message_id: message.properties.messageId as unknown, ...describeError(err) },
        'broker retry publish failed; message requeued',
      );
      this.settleOn(delivery, (channel, msg) => channel.nack(msg, false, true));
    }
  }

  /** Publishes a copy to `{queue}.dlq` (declared when missing), then acks this one; requeues it when that fails. */
  private async deadLetter(delivery: Delivery, reason: DeathReason, deliveries: number): Promise<void> {
    const { message, session } = delivery;
    const queue = this.names.deadLetterQueue;
    const fields = {
      message_id: message.properties.messageId as unknown,
      delivery_attempt: deliveries,
      max_deliveries: this.config.maxDeliveries,
      dead_letter_queue: queue,
    };
    const headers = copyHeaders(message, {
      [DELIVERIES_HEADER]: deliveries,
      'x-pullsecret-death-reason': reason,
      'x-pullsecret-source-queue': this.names.queue,
    });
    try {
      session.deadLetterQueue ??= ensurePlainQueue(session.connection, queue);
      await session.deadLetterQueue;
      await this.confirmedPublish(session, '', queue, message.content, {
        ...copyProperties(message),
        headers,
      });
    } catch (err) {
      session.deadLetterQueue = undefined;
      this.log(
        'error',
        { ...fields, ...describeError(classifyConnectError(err, this.address)) },
        'broker dead-letter publish failed; message requeued',
      );
      this.settleOn(delivery, (channel, msg) => channel.nack(msg, false, true));
      return;
    }
    this.settleOn(delivery, (channel, msg) => channel.ack(msg));
    if (reason === 'rejected') this.log('warn', fields, 'broker message rejected; dead-lettered');
    else this.log('error', fields, 'broker message dead-lettered after its last delivery attempt');
  }

  /** Acks or nacks on the delivery's own channel; if that channel died, RabbitMQ already requeued it. */
  private settleOn(delivery: Delivery, settle: (channel: Channel, message: ConsumeMessage) => void): void {
    try {
      settle(delivery.session.channel, delivery.message);
    } catch {
      this.log(
        'debug',
        { message_id: delivery.message.properties.messageId as unknown },
        'broker settle skipped: channel closed; message will be redelivered',
      );
    }
  }

  private log(
    level: 'debug' | 'info' | 'warn' | 'error',
    fields: Record<string, unknown>,
    message: string,
  ): void {
    this.options.logger?.[level]({ broker: this.kind, address: this.address, ...fields }, message);
  }
}
