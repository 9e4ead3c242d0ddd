import {
  Duration,
  type Message,
  type PubSub,
  type Subscription,
  type SubscriberOptions,
} from '@google-cloud/pubsub';
import { PullSecretError, describeError } from '../../errors/index.js';
import { runHandler } from '../run-handler.js';
import type { Logger } from '../../observability/logger.js';
import { backoffDelay, type RetryPolicy } from '../../util/retry.js';
import type { Broker, InboundMessage, MessageHandler } from '../broker.js';
import { InFlight } from '../in-flight.js';
import type { PubSubBrokerConfig } from './config.js';
import { classifyPubSubError, grpcCode } from './errors.js';
import { createPubSubClient, loadCredentials } from './credentials.js';
import { ensureTopology, type PubSubTopology } from './topology.js';
import { routeProcessWarnings } from './warnings.js';

const DEFAULT_DRAIN_MS = 10_000;

/**
 * Google Pub/Sub broker (`@google-cloud/pubsub`). Ensures the topology (see `ensureTopology`),
 * consumes with flow control maxMessages = `maxInFlight`, and settles: 'ack' → ack, 'retry' → nack
 * (redelivered after the subscription's retry backoff), 'reject' → publish the original bytes and
 * attributes to `{subscriptionId}-dlq`, then ack (so a malformed message is never retried, even where
 * dead-letter policies are not enforced); without that topic, nack (see `ensureTopology`). The client
 * library re-opens its streams by itself; this
 * class reports errors and tracks readiness.
 */
export class PubSubBroker implements Broker {
  readonly kind = 'pubsub';
  private readonly probePolicy: RetryPolicy;
  private client: PubSub | undefined;
  private topology: Promise<PubSubTopology> | undefined;
  private subscription: Subscription | undefined;
  private handler: MessageHandler | undefined;
  private started = false;
  private ready = false;
  private readonly inFlight = new InFlight<Message>();
  private readonly controller = new AbortController();
  private stopping: Promise<void> | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private probeAttempt = 0;

  constructor(
    private readonly config: PubSubBrokerConfig,
    private readonly options: { logger?: Logger } = {},
  ) {
    this.probePolicy = {
      maxAttempts: Infinity,
      baseDelayMs: config.reconnectBaseDelayMs,
      maxDelayMs: config.reconnectMaxDelayMs,
    };
    if (options.logger !== undefined) routeProcessWarnings(options.logger);
  }

  /**
   * Ensures the topology and opens the subscription's streaming pull.
   * @throws PullSecretError BROKER_UNAVAILABLE (service unreachable), CONFIG_INVALID (names, missing
   *   resources with createIfMissing off, permissions), INTERNAL when already started or stopped.
   */
  async start(handler: MessageHandler): Promise<void> {
    if (this.started || this.stopping !== undefined)
      throw new PullSecretError('INTERNAL', 'Pub/Sub broker already started or stopped');
    this.started = true;
    const client = this.ensureClient();
    try {
      await this.ensureTopology();
    } catch (err) {
      // Not started: the caller may try again.
      this.started = false;
      throw err;
    }
    if (this.stopping !== undefined) return;
    this.handler = handler;
    const subscriberOptions: SubscriberOptions = {
      flowControl: { maxMessages: this.config.maxInFlight, allowExcessMessages: false },
      // Closing waits for handlers (our own drain decides when to give up and nack).
      closeOptions: { behavior: 'WAIT', timeout: Duration.from({ minutes: 10 }) },
    };
    const subscription = client.subscription(this.config.subscriptionId, subscriberOptions);
    subscription.on('error', (err: unknown) => this.onStreamError(err));
    subscription.on('debug', (msg: { message?: string }) =>
      this.log('debug', { detail: msg.message }, 'broker stream event'),
    );
    subscription.on('message', (message: Message) => this.onMessage(message));
    this.subscription = subscription;
    this.ready = true;
    this.log(
      'info',
      { subscription: this.config.subscriptionId, max_in_flight: this.config.maxInFlight },
      'broker consuming',
    );
  }

  /**
   * Publishes to the topic (ensuring the topology first).
   * @throws PullSecretError BROKER_UNAVAILABLE, CONFIG_INVALID.
   */
  async publish(body: Buffer, attributes: Record<string, string> = {}): Promise<void> {
    if (this.stopping !== undefined)
      throw new PullSecretError('BROKER_UNAVAILABLE', 'Pub/Sub broker is stopped');
    const { topic } = await this.ensureTopology();
    try {
      await topic.publishMessage({ data: body, attributes });
    } catch (err) {
      throw classifyPubSubError(err, 'publishing a message');
    }
  }

  isReady(): boolean {
    return this.ready && this.stopping === undefined;
  }

  /**
   * Closes the stream (no new messages), waits up to `drainMs` for in-flight handlers, nacks what did
   * not finish (redelivered to another consumer) and closes the client. Safe to call twice.
   */
  stop(options: { drainMs?: number } = {}): Promise<void> {
    this.stopping ??= this.shutdown(options.drainMs ?? DEFAULT_DRAIN_MS);
    return this.stopping;
  }

  private async shutdown(drainMs: number): Promise<void> {
    this.ready = false;
    clearTimeout(this.probeTimer);
    const subscription = this.subscription;
    const closing = subscription
      ?.close()
      .catch((err: unknown) => this.log('warn', { error_code: grpcCode(err) }, 'broker close failed'));
    if (!(await this.inFlight.waitIdle(drainMs))) {
      this.controller.abort(new PullSecretError('ABORTED', 'broker stopping: drain time is over'));
      const abandoned = this.inFlight.abandon();
      this.log(
        'warn',
        { abandoned: abandoned.length },
        'broker drain time over; unfinished messages nacked for redelivery',
      );
      for (const message of abandoned) message.nack();
    }
    await closing;
    subscription?.removeAllListeners();
    await this.topology?.catch(() => undefined);
    await this.client?.close().catch(() => undefined);
  }

  private ensureClient(): PubSub {
    this.client ??= createPubSubClient(this.config);
    return this.client;
  }

  private ensureTopology(): Promise<PubSubTopology> {
    const client = this.ensureClient();
    this.topology ??= loadCredentials(client)
      .then(() =>
        ensureTopology(client, this.config, {
          timeoutMs: this.config.requestTimeoutMs,
          logger: this.options.logger,
        }),
      )
      .catch((err: unknown) => {
        this.topology = undefined;
        throw err;
      });
    return this.topology;
  }

  private onMessage(message: Message): void {
    const handler = this.handler;
    if (handler === undefined || this.stopping !== undefined) {
      message.nack();
      return;
    }
    this.markReady();
    this.inFlight.add(message);
    void this.handle(message, handler);
  }

  private async handle(message: Message, handler: MessageHandler): Promise<void> {
    const inbound: InboundMessage = {
      id: message.id,
      body: message.data,
      attributes: Object.freeze({ ...message.attributes }),
      // 0 when the subscription has no dead-letter policy (the service does not count then).
      deliveryAttempt: message.deliveryAttempt > 0 ? message.deliveryAttempt : 1,
    };
    const disposition = await runHandler(handler, inbound, this.controller.signal, (fields, text) =>
      this.log('warn', fields, text),
    );
    // Abandoned by a hard stop: already nacked.
    if (!this.inFlight.has(message)) return;
    if (disposition === 'ack') message.ack();
    else if (disposition === 'reject') await this.deadLetter(message, inbound);
    else message.nack();
    this.inFlight.delete(message);
  }

  private async deadLetter(message: Message, inbound: InboundMessage): Promise<void> {
    const fields = { message_id: inbound.id, delivery_attempt: inbound.deliveryAttempt };
    try {
      const { deadLetterTopic } = await this.ensureTopology();
      if (deadLetterTopic === undefined) {
        // No dead-letter topic we may publish to: the subscription's own dead-letter policy moves it
        // after its maximum attempts; without one it comes back after the subscription's retry backoff.
        message.nack();
        this.log('warn', fields, 'broker message rejected; nacked (no dead-letter topic)');
        return;
      }
      // The attribute names Pub/Sub itself puts on dead-lettered messages, so the queue reads the same.
      const attributes = {
        ...message.attributes,
        CloudPubSubDeadLetterSourceSubscription: this.config.subscriptionId,
        CloudPubSubDeadLetterSourceDeliveryCount: String(inbound.deliveryAttempt),
      };
      await deadLetterTopic.publishMessage({ data: message.data, attributes });
      message.ack();
      this.log(
        'warn',
        { ...fields, dead_letter_topic: deadLetterTopic.name },
        'broker message rejected; dead-lettered',
      );
    } catch (err) {
      message.nack();
      this.log(
        'error',
        { ...fields, ...describeError(classifyPubSubError(err, 'dead-lettering a message')) },
        'broker dead-letter publish failed; message will be redelivered',
      );
    }
  }

  private onStreamError(err: unknown): void {
    if (this.stopping !== undefined) return;
    this.ready = false;
    this.log(
      'warn',
      { ...describeError(classifyPubSubError(err, 'streaming messages')), grpc_code: grpcCode(err) },
      'broker stream error',
    );
    this.scheduleProbe();
  }

  /** After an error, asks the service until it answers, then re-opens the stream if it closed. */
  private scheduleProbe(): void {
    if (this.probeTimer !== undefined || this.stopping !== undefined) return;
    this.probeAttempt += 1;
    this.probeTimer = setTimeout(
      () => {
        void this.probe();
      },
      backoffDelay(this.probePolicy, this.probeAttempt),
    );
  }

  private async probe(): Promise<void> {
    const subscription = this.subscription;
    try {
      await subscription?.getMetadata({ timeout: this.config.requestTimeoutMs });
      this.probeTimer = undefined;
      if (this.stopping !== undefined || subscription === undefined) return;
      if (!subscription.isOpen) subscription.open();
      this.markReady();
    } catch (err) {
      this.probeTimer = undefined;
      this.log(
        'debug',
        { grpc_code: grpcCode(err), attempt: this.probeAttempt },
        'broker readiness probe failed',
      );
      this.scheduleProbe();
    }
  }

  private markReady(): void {
    if (!this.ready && this.stopping === undefined) this.log('info', {}, 'broker stream flowing again');
    this.ready = this.stopping === undefined;
    this.probeAttempt = 0;
    clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
  }

  private log(
    level: 'debug' | 'info' | 'warn' | 'error',
    fields: Record<string, unknown>,
    message: string,
  ): void {
    this.options.logger?.[level]({ broker: this.kind, ...fields }, message);
  }
}
