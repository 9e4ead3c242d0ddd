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

/** Queue types the broker may be asked to declare a missing queue with. */
const RABBITMQ_QUEUE_TYPES = ['quorum', 'classic'] as const;

/** Exchange types the broker declares a missing exchange with (an existing one of any type is used as it is). */
const RABBITMQ_EXCHANGE_TYPES = ['topic', 'fanout'] as const;

/**
 * Settings of the RabbitMQ broker (docs/configuration.md). The topology is HyperFleet's broker
 * library's: a durable exchange and a durable queue `{queue or topic}-{subscriptionId}` bound with
 * `bindingKey` (default `""`). What exists is used as it is; what is missing is declared as the
 * library declares it. Dead letters go to `{queue}.dlq`, published by the broker itself. The URL may
 * hold credentials, so no message here ever echoes it.
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
      .refine((name) => !name.startsWith('amq.'), {
        message: 'must not start with "amq." (reserved by RabbitMQ)',
      }),
    /** Type of an exchange the broker declares: `topic` as HyperFleet deploys it, or the library's default `fanout`. */
    exchangeType: z.enum(RABBITMQ_EXCHANGE_TYPES).default('topic'),
    topic: z.string().regex(AMQP_NAME, { message: NAME_RULE }),
    /** Base of the queue name instead of `topic` (the library's `rabbitmq.queue`). */
    queue: z.string().regex(AMQP_NAME, { message: NAME_RULE }).optional(),
    /** Replicas with the same subscription id share one queue (competing consumers). */
    subscriptionId: z.string().regex(AMQP_NAME, { message: NAME_RULE }),
    /**
     * Binding key of the queue on the exchange: `""` as the library binds (a fanout exchange ignores
     * it; a topic exchange then routes only messages published with `""`), a topic pattern, or `#`.
     */
    bindingKey: z
      .string()
      .regex(BINDING_KEY, {
        message: 'must be a topic binding key: up to 255 letters, digits, "_", ".", ":", "-", "*" or "#"',
      })
      .default(''),
    /** Key of the broker's own publishes (the library's `routing_key`); default: a plain bindingKey, else `""`. */
    routingKey: z
      .string()
      .regex(BINDING_KEY, { message: 'must be up to 255 letters, digits, "_", ".", ":", "-", "*" or "#"' })
      .optional(),
    /**
     * Only for a queue the broker has to declare: unset declares it as the library does (durable, no
     * arguments); `quorum` adds `x-queue-type: quorum`. An existing queue is used as it is.
     */
    queueType: z.enum(RABBITMQ_QUEUE_TYPES).optional(),
    /** Deliveries of one message before it is dead-lettered instead of retried (counted by the broker: message.ts). */
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
