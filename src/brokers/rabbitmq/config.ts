import { z } from 'zod';

/** Exchange, topic and subscription names: AMQP short strings, kept to a portable alphabet. */
const AMQP_NAME = /^[A-Za-z0-9_.:-]{1,120}$/;
const NAME_RULE = 'must be 1-120 letters, digits, "_", ".", ":" or "-"';

function isAmqpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'amqp:' || url.protocol === 'amqps:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A topic-exchange binding key: dot-separated words, `*` (one word) and `#` (zero or more words). */
const BINDING_KEY = /^[A-Za-z0-9_.:*#-]{0,255}$/;

/** Queue types the broker declares: quorum (bounded deliveries) or classic (queues declared before). */
export const RABBITMQ_QUEUE_TYPES = ['quorum', 'classic'] as const;

/**
 * Settings of the RabbitMQ broker (docs/configuration.md): a durable `topic` exchange, a durable queue
 * `{topic}-{subscriptionId}` bound with `bindingKey` (default `""`), and a dead-letter exchange /
 * queue. The URL may hold credentials, so no message here ever echoes it.
 */
export const rabbitMqBrokerConfigSchema = z
  .object({
    type: z.literal('rabbitmq'),
    /** `amqp://user:pass@host:5672/vhost` (or `amqps://`). */
    url: z.string().refine(isAmqpUrl, { message: 'must be an amqp:// or amqps:// URL with a host' }),
    /** The exchange the Sentinel publishes to. */
    exchange: z
      .string()
      .regex(AMQP_NAME, { message: NAME_RULE })
      .refine((name) => !name.startsWith('amq.'), { message: 'must not start with "amq." (reserved by RabbitMQ)' }),
    topic: z.string().regex(AMQP_NAME, { message: NAME_RULE }),
    /** Replicas with the same subscription id share one queue (competing consumers). */
    subscriptionId: z.string().regex(AMQP_NAME, { message: NAME_RULE }),
    /**
     * Binding key of the queue on the exchange: `""` as upstream (only messages published with an
     * empty routing key), a topic pattern, or `#` for any routing key. A message no binding matches
     * is dropped by the exchange.
     */
    bindingKey: z.string().regex(BINDING_KEY, { message: 'must be a topic binding key: up to 255 letters, digits, "_", ".", ":", "-", "*" or "#"' }).default(''),
    /**
     * `quorum` (default): RabbitMQ counts deliveries and dead-letters a message after `maxDeliveries`
     * (also when the consumer died mid-message). `classic`: for a queue declared as classic before;
     * RabbitMQ refuses to redeclare a queue with another type (see docs/deployment.md).
     */
    queueType: z.enum(RABBITMQ_QUEUE_TYPES).default('quorum'),
    /** Deliveries of one message before it is dead-lettered instead of retried again. */
    maxDeliveries: z.coerce.number().int().min(1).max(1000).default(10),
    /** Unacknowledged messages at once (the channel prefetch). */
    maxInFlight: z.coerce.number().int().min(1).max(65_535).default(8),
    /** How long a message a handler asked to retry is held before it is requeued, in ms. */
    retryDelayMs: z.coerce.number().int().min(0).max(600_000).default(1_000),
    /** First reconnect delay after a lost connection, in ms; doubled each attempt, jittered. */
    reconnectBaseDelayMs: z.coerce.number().int().min(10).max(600_000).default(500),
    /** Upper bound of one reconnect delay, in ms. */
    reconnectMaxDelayMs: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
    /** TCP connect timeout, in ms. */
    connectTimeoutMs: z.coerce.number().int().min(100).max(600_000).default(10_000),
  })
  .strict();

export type RabbitMqBrokerConfig = z.output<typeof rabbitMqBrokerConfigSchema>;

/** `host:port` of the broker, for messages and logs (never the credentials). */
export function brokerAddress(url: string): string {
  const parsed = new URL(url);
  const port = parsed.port !== '' ? parsed.port : parsed.protocol === 'amqps:' ? '5671' : '5672';
  return `${parsed.hostname}:${port}`;
}
