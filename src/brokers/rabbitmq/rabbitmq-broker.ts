import { randomUUID } from 'node:crypto';
import { connect, type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage, type RecoveringChannelModel } from 'amqplib';
import { PullSecretError, describeError } from '../../errors/index.js';
import { runHandler } from '../run-handler.js';
import type { Logger } from '../../observability/logger.js';
import { backoffDelay, type RetryPolicy } from '../../util/retry.js';
import type { Broker, MessageHandler } from '../broker.js';
import { InFlight } from '../in-flight.js';
import { brokerAddress, type RabbitMqBrokerConfig } from './config.js';
import { classifyConnectError } from './errors.js';
import { toInboundMessage } from './message.js';
import { declareTopology, publishRoutingKey, topologyNames, type RabbitMqTopology } from './topology.js';

/** Channels of one live connection; replaced as a whole on reconnect. */
interface Session {
  readonly connection: ChannelModel;
  readonly channel: Channel;
  readonly publisher: ConfirmChannel;
  consuming: boolean;
  consumerTag?: string;
}

/** A message handed to the handler, settled on the channel it came from. */
interface Delivery {
  readonly message: ConsumeMessage;
  readonly session: Session;
}

const DEFAULT_DRAIN_MS = 10_000;
const CONTENT_TYPE = 'application/cloudevents+json';

/**
 * RabbitMQ broker (`amqplib`). Declares the topology on every (re)connect, consumes with
 * prefetch = `maxInFlight`, and settles: 'ack' → ack, 'reject' → nack without requeue (dead-lettered
 * to `{queue}.dlq`), 'retry' → nack with requeue after `retryDelayMs` so a failing message does not
 * spin, or dead-lettered once it had `maxDeliveries` deliveries. Reconnects with jittered exponential backoff; a handler that finishes after its connection
 * died settles nothing (the broker redelivers the message).
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
  private readonly delayed = new Map<NodeJS.Timeout, Delivery>();
  private readonly controller = new AbortController();
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly config: RabbitMqBrokerConfig,
    private readonly options: { logger?: Logger } = {},
  ) {
    this.names = topologyNames(config);
    this.address = brokerAddress(config.url);
    this.reconnectPolicy = { maxAttempts: Infinity, baseDelayMs: config.reconnectBaseDelayMs, maxDelayMs: config.reconnectMaxDelayMs };
  }

  /**
   * Connects, declares the topology and consumes. @throws PullSecretError BROKER_UNAVAILABLE when the
   * first connection fails, CONFIG_INVALID when RabbitMQ refuses the credentials or the topology,
   * INTERNAL when already started or stopped.
   */
  async start(handler: MessageHandler): Promise<void> {
    if (this.handler !== undefined || this.stopping !== undefined) throw new PullSecretError('INTERNAL', 'RabbitMQ broker already started or stopped');
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
    if (this.stopping !== undefined) throw new PullSecretError('BROKER_UNAVAILABLE', 'RabbitMQ broker is stopped');
    await this.connect();
    const session = this.session;
    if (session === undefined) throw new PullSecretError('BROKER_UNAVAILABLE', `not connected to RabbitMQ at ${this.address} (reconnecting)`);
    const options = { persistent: true, contentType: CONTENT_TYPE, messageId: randomUUID(), timestamp: Math.floor(Date.now() / 1000), headers: attributes };
    await new Promise<void>((resolve, reject) => {
      const fail = (cause: unknown): void => reject(new PullSecretError('BROKER_UNAVAILABLE', `RabbitMQ at ${this.address} did not confirm the message`, { cause }));
      try {
        session.publisher.publish(this.names.exchange, publishRoutingKey(this.config.bindingKey), body, options, (err: unknown) => (err ? fail(err) : resolve()));
      } catch (err) {
        fail(err);
      }
    });
  }

  isReady(): boolean {
    const session = this.session;
    return this.stopping === undefined && session !== undefined && (this.handler === undefined || session.consumerTag !== undefined);
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
    for (const [timer, delivery] of this.delayed) {
      clearTimeout(timer);
      this.settleOn(delivery, (channel, message) => channel.nack(message, false, true));
    }
    this.delayed.clear();
    if (!(await this.inFlight.waitIdle(drainMs))) {
      this.controller.abort(new PullSecretError('ABORTED', 'broker stopping: drain time is over'));
      const abandoned = this.inFlight.abandon();
      this.log('warn', { abandoned: abandoned.length }, 'broker drain time over; unfinished messages left unacked for redelivery');
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
    model.on('reconnect-scheduled', ({ attempt, delay }: { attempt: number; delay: number }) => this.log('info', { attempt, delay_ms: delay }, 'broker reconnect scheduled'));
    model.on('connect-failed', (err: Error) => this.log('warn', describeError(classifyConnectError(err, this.address)), 'broker reconnect failed'));
    model.on('connect', () => this.log('info', {}, 'broker connected'));
    model.on('blocked', (reason: string) => this.log('warn', { reason }, 'broker blocked the connection (resource alarm)'));
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
    await declareTopology(channel, this.names, this.config);
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
    const reply = await session.channel.consume(this.names.queue, (message) => this.onMessage(session, message), { noAck: false });
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
    void this.handle(delivery, handler);
  }

  private async handle(delivery: Delivery, handler: MessageHandler): Promise<void> {
    const inbound = toInboundMessage(delivery.message);
    const disposition = await runHandler(handler, inbound, this.controller.signal, (fields, text) => this.log('warn', fields, text));
    // Abandoned by a hard stop: leave it unacked so RabbitMQ redelivers it.
    if (!this.inFlight.delete(delivery)) return;
    if (disposition === 'ack') {
      this.settleOn(delivery, (channel, message) => channel.ack(message));
    } else if (disposition === 'reject') {
      this.log('warn', { message_id: inbound.id, delivery_attempt: inbound.deliveryAttempt, dead_letter_queue: this.names.deadLetterQueue }, 'broker message rejected; dead-lettered');
      this.settleOn(delivery, (channel, message) => channel.nack(message, false, false));
    } else if (inbound.deliveryAttempt >= this.config.maxDeliveries) {
      // The last attempt: dead-letter now rather than requeue for the queue to do it (a classic queue
      // never would). The quorum queue's own limit still covers a consumer that dies mid-message.
      const fields = { message_id: inbound.id, delivery_attempt: inbound.deliveryAttempt, max_deliveries: this.config.maxDeliveries };
      this.log('error', { ...fields, dead_letter_queue: this.names.deadLetterQueue }, 'broker message dead-lettered after its last delivery attempt');
      this.settleOn(delivery, (channel, message) => channel.nack(message, false, false));
    } else if (this.stopping !== undefined || this.config.retryDelayMs === 0) {
      this.settleOn(delivery, (channel, message) => channel.nack(message, false, true));
    } else {
      // Held (still unacked, so it keeps its prefetch slot) so that a failing message does not spin hot.
      const timer = setTimeout(() => {
        this.delayed.delete(timer);
        this.settleOn(delivery, (channel, message) => channel.nack(message, false, true));
      }, this.config.retryDelayMs);
      this.delayed.set(timer, delivery);
    }
  }

  /** Acks or nacks on the delivery's own channel; if that channel died, RabbitMQ already requeued it. */
  private settleOn(delivery: Delivery, settle: (channel: Channel, message: ConsumeMessage) => void): void {
    try {
      settle(delivery.session.channel, delivery.message);
    } catch {
      this.log('debug', { message_id: delivery.message.properties.messageId as unknown }, 'broker settle skipped: channel closed; message will be redelivered');
    }
  }

  private log(level: 'debug' | 'info' | 'warn' | 'error', fields: Record<string, unknown>, message: string): void {
    this.options.logger?.[level]({ broker: this.kind, address: this.address, ...fields }, message);
  }
}
