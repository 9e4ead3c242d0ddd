/**
 * The RabbitMQ broker: connection and recovery, topology on every (re)connect, the consumer and
 * the dispatch of each delivery; how a delivery is settled (retry, dead letter) is settle.ts.
 */
import { randomUUID } from 'node:crypto';
import { connect, type ChannelModel, type ConsumeMessage, type RecoveringChannelModel } from 'amqplib';
import { PullSecretError, describeError } from '../../errors/index.js';
import { runHandler } from '../run-handler.js';
import type { Logger } from '../../observability/logger.js';
import { backoffDelay, type RetryPolicy } from '../../util/retry.js';
import type { Broker, MessageHandler } from '../broker.js';
import { InFlight } from '../in-flight.js';
import { brokerAddress, type RabbitMqBrokerConfig } from './config.js';
import { classifyConnectError } from './errors.js';
import { deliveryAttemptOf, isUncountedRedelivery, priorDeliveries, toInboundMessage } from './message.js';
import {
  confirmedPublish,
  deadLetter,
  requeue,
  settleOn,
  type BrokerLog,
  type Delivery,
  type Session,
  type SettleContext,
} from './settle.js';
import { declareTopology, publishRoutingKey, topologyNames, type RabbitMqTopology } from './topology.js';

const DEFAULT_DRAIN_MS = 10_000;
const CONTENT_TYPE = 'application/cloudevents+json';

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
  private readonly logTo: BrokerLog = (level, fields, message) => this.log(level, fields, message);
  private readonly settling: SettleContext;

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
    this.settling = {
      address: this.address,
      names: this.names,
      maxDeliveries: config.maxDeliveries,
      log: this.logTo,
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
    await confirmedPublish(
      this.address,
      session,
      this.names.exchange,
      publishRoutingKey(this.config),
      body,
      options,
    );
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
      settleOn(this.logTo, delivery, (channel, message) => channel.nack(message, false, true));
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
      settleOn(this.logTo, delivery, (channel, msg) => channel.nack(msg, false, true));
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
        ? deadLetter(this.settling, delivery, 'delivery_limit', deliveries)
        : requeue(this.settling, delivery, deliveries));
      return;
    }
    const attempt = deliveryAttemptOf(message);
    if (attempt > max) {
      // Counted by the queue (x-delivery-count): its consumers kept dying on it.
      await deadLetter(this.settling, delivery, 'delivery_limit', attempt - 1);
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
      settleOn(this.logTo, delivery, (channel, message) => channel.ack(message));
    } else if (disposition === 'reject') {
      await deadLetter(this.settling, delivery, 'rejected', inbound.deliveryAttempt);
    } else if (inbound.deliveryAttempt >= this.config.maxDeliveries) {
      await deadLetter(this.settling, delivery, 'delivery_limit', inbound.deliveryAttempt);
    } else if (this.stopping !== undefined) {
      settleOn(this.logTo, delivery, (channel, message) => channel.nack(message, false, true));
    } else {
      // Held (still unacked, so it keeps its prefetch slot) so that a failing message does not spin hot.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.delayed.delete(timer);
          void requeue(this.settling, delivery, inbound.deliveryAttempt).finally(resolve);
        }, this.config.retryDelayMs);
        this.delayed.set(timer, { delivery, release: resolve });
      });
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
