/**
 * The broker contract (docs/architecture.md). Every broker (embedded, RabbitMQ, Google Pub/Sub)
 * delivers messages to one handler and settles each one as the handler decides; nothing outside a
 * broker's folder imports its client library. A message is delivered at most its configured number
 * of times (retried, or abandoned by a consumer that stopped or died), then dead-lettered (dropped
 * and logged on the embedded broker), never redelivered forever. `test/brokers/broker-contract.test.ts`
 * runs these rules against every broker.
 */

/** What to do with a message once handled. */
export type Disposition =
  /** Done (also for work skipped on purpose): remove it. */
  | 'ack'
  /** Transient failure: deliver it again later (with backoff where the broker allows). */
  | 'retry'
  /** Can never succeed (malformed): dead-letter it, or drop it where there is no dead-letter route. */
  | 'reject';

/** One delivered message. The body is never logged (it may be anything). */
export interface InboundMessage {
  /** Broker message id (RabbitMQ message-id or delivery tag, Pub/Sub message id). */
  id: string;
  body: Buffer;
  /** Headers / attributes as strings. */
  attributes: Readonly<Record<string, string>>;
  /**
   * 1 on first delivery, counted by the broker (Pub/Sub with a dead-letter policy, a RabbitMQ quorum
   * queue, the embedded queue); a classic RabbitMQ queue only flags a redelivery, which reads 2.
   */
  deliveryAttempt: number;
}

/**
 * Handles one message. `signal` fires when the broker stops hard (drain time over); the handler
 * should then give up quickly. A thrown error counts as 'retry'.
 */
export type MessageHandler = (message: InboundMessage, signal: AbortSignal) => Promise<Disposition>;

export interface Broker {
  /** `embedded`, `rabbitmq` or `pubsub`. */
  readonly kind: string;
  /**
   * Connects, declares its topology (exchange/queue, topic/subscription/dead-letter topic) and starts
   * delivering to `handler`, at most `maxInFlight` messages at once (its prefetch / flow control).
   * Reconnects by itself after a broker restart.
   * @throws PullSecretError BROKER_UNAVAILABLE when the first connection fails, CONFIG_INVALID.
   */
  start(handler: MessageHandler): Promise<void>;
  /** Publishes a message to the topic/exchange the broker consumes from (Sentinel, dev stack, tests). */
  publish(body: Buffer, attributes?: Record<string, string>): Promise<void>;
  /** True while connected and consuming (feeds /readyz). */
  isReady(): boolean;
  /**
   * Stops taking new messages, waits up to `drainMs` for in-flight handlers to settle, then aborts
   * the rest (their messages are not acked, so the broker redelivers them) and disconnects.
   * Safe to call twice.
   */
  stop(options?: { drainMs?: number }): Promise<void>;
}
