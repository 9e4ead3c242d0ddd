import { z } from 'zod';
import { parseDuration, type DurationSyntax } from '../util/duration.js';
import { isPlainObject } from './paths.js';
import { issueLines } from './problems.js';

/**
 * The hyperfleet-broker library's configuration (the `broker.yaml` every HyperFleet component reads,
 * `BROKER_CONFIG_FILE`, overridden by `BROKER_*` / `SUBSCRIBER_*` variables named after the key path)
 * and its translation into our broker settings. Keys the library knows but we have no use for are
 * accepted and ignored, so a platform's existing file works unchanged; a key it does not know is a
 * typo and refused.
 */

const text = z.string();
const count = z.coerce
  .number({ message: 'must be a number' })
  .int('must be a whole number')
  .min(0, 'must not be negative');
const flag = z.union([z.boolean(), z.stringbool()], { message: 'must be true or false' });
/** Pub/Sub durations as the library writes them: `600s` (seconds only; minutes would be `10m`). */
const PUBSUB_DURATION: DurationSyntax = { units: ['s', 'm', 'h'], bare: 's' };
const seconds = z
  .union([
    z.number(),
    z
      .string()
      .refine(
        (v) => parseDuration(v, PUBSUB_DURATION) !== undefined,
        'must be a duration such as 10s, 5m or 1h',
      ),
  ])
  .transform((v) =>
    typeof v === 'number' ? v : Math.round((parseDuration(v, PUBSUB_DURATION) ?? 0) / 1000),
  );

const hyperfleetBrokerFileSchema = z
  .object({
    log_config: flag.optional(),
    broker: z
      .object({
        type: z
          .enum(['rabbitmq', 'googlepubsub'], { message: 'must be rabbitmq or googlepubsub' })
          .optional(),
        rabbitmq: z
          .object({
            url: text.optional(),
            exchange: text.optional(),
            exchange_type: text.optional(),
            queue: text.optional(),
            routing_key: text.optional(),
            prefetch_count: count.optional(),
            prefetch_size: count.optional(),
            consumer_tag: text.optional(),
            publisher_confirm: flag.optional(),
          })
          .strict()
          .optional(),
        googlepubsub: z
          .object({
            project_id: text.optional(),
            topic: text.optional(),
            subscription: text.optional(),
            ack_deadline_seconds: count.optional(),
            message_retention_duration: text.optional(),
            expiration_ttl: text.optional(),
            enable_message_ordering: flag.optional(),
            retry_min_backoff: seconds.optional(),
            retry_max_backoff: seconds.optional(),
            dead_letter_topic: text.optional(),
            dead_letter_max_attempts: count.optional(),
            topic_retention_duration: text.optional(),
            max_outstanding_messages: count.optional(),
            max_outstanding_bytes: count.optional(),
            num_goroutines: count.optional(),
            create_topic_if_missing: flag.optional(),
            create_subscription_if_missing: flag.optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    subscriber: z.object({ parallelism: count.optional() }).strict().optional(),
  })
  .strict();

type BrokerFile = z.output<typeof hyperfleetBrokerFileSchema>;

/** Every key path of the file (`broker.rabbitmq.url`). */
export function hyperfleetBrokerKeys(): string[] {
  const paths: string[] = [];
  const walk = (shape: Record<string, unknown>, prefix: string) => {
    for (const [key, child] of Object.entries(shape)) {
      const inner = (child as { unwrap?: () => unknown }).unwrap?.() ?? child;
      const childShape = (inner as { shape?: Record<string, unknown> }).shape;
      if (childShape !== undefined) walk(childShape, `${prefix}${key}.`);
      else paths.push(`${prefix}${key}`);
    }
  };
  walk(hyperfleetBrokerFileSchema.shape, '');
  return paths;
}

/**
 * The library's environment overrides of `broker.*` and `subscriber.*`: variable name → key path.
 * `BROKER_TYPE` is left out: it is also ours (it may say `embedded`), read with our overrides.
 */
export const HYPERFLEET_BROKER_ENV: Readonly<Record<string, string>> = Object.fromEntries(
  hyperfleetBrokerKeys()
    .filter((path) => path.startsWith('broker.') || path.startsWith('subscriber.'))
    .map((path): [string, string] => [path.toUpperCase().replace(/\./g, '_'), path])
    .filter(([name]) => name !== 'BROKER_TYPE'),
);

function set(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    if (node[key] === null || typeof node[key] !== 'object') node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys.at(-1) as string] = value;
}

/**
 * The file (parsed YAML, or `{}` without one) with the library's environment overrides applied,
 * checked against the library's keys.
 * @returns the document, or the problems (`BROKER_CONFIG_FILE broker.x: rule`).
 */
export function hyperfleetBrokerDocument(
  file: unknown,
  env: NodeJS.ProcessEnv,
): { ok: true; value: BrokerFile } | { ok: false; problems: string[] } {
  if (file !== undefined && file !== null && !isPlainObject(file))
    return { ok: false, problems: ['hyperfleet-broker: must be a YAML mapping'] };
  const doc = structuredClone(file ?? {});
  for (const [name, path] of Object.entries(HYPERFLEET_BROKER_ENV)) {
    const value = env[name];
    if (value !== undefined && value !== '') set(doc, path, value);
  }
  const parsed = hyperfleetBrokerFileSchema.safeParse(doc);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, problems: issueLines(parsed.error, 'hyperfleet-broker') };
}

const defined = (entries: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined && v !== ''));

/**
 * Our broker settings from a hyperfleet-broker document: only what it sets, so lower layers and
 * defaults fill the rest. `googlepubsub` is our `pubsub`; `subscriber.parallelism` is the number of
 * messages in flight (it wins over `prefetch_count` / `max_outstanding_messages`, as in the library).
 * The RabbitMQ exchange defaults to the topic name, as the library names it; `queue` is the base of
 * the queue name and `routing_key` the key of the broker's own publishes, as in the library.
 *
 * @returns the partial broker settings, and problems for values we cannot honour.
 */
export function translateHyperfleetBroker(doc: BrokerFile): {
  broker: Record<string, unknown>;
  problems: string[];
} {
  const problems: string[] = [];
  const parallelism = doc.subscriber?.parallelism || undefined;
  const type = doc.broker?.type;
  const rabbit = doc.broker?.rabbitmq;
  const pubsub = doc.broker?.googlepubsub;
  const exchangeType = rabbit?.exchange_type || undefined;
  if (exchangeType !== undefined && exchangeType !== 'topic' && exchangeType !== 'fanout') {
    problems.push(
      'hyperfleet-broker.broker.rabbitmq.exchange_type: must be topic or fanout (the types the adapter ' +
        'declares a missing exchange with)',
    );
  }
  const broker: Record<string, unknown> = defined({ type: type === 'googlepubsub' ? 'pubsub' : type });
  if (rabbit !== undefined && type !== 'googlepubsub') {
    // routing_key is the library's publisher key; its subscriber binds with "" (our bindingKey default).
    const settings = {
      url: rabbit.url,
      exchange: rabbit.exchange,
      exchangeType,
      queue: rabbit.queue,
      routingKey: rabbit.routing_key,
    };
    Object.assign(
      broker,
      defined({ ...settings, maxInFlight: parallelism ?? (rabbit.prefetch_count || undefined) }),
    );
  }
  if (pubsub !== undefined && type !== 'rabbitmq') {
    const create = [pubsub.create_topic_if_missing, pubsub.create_subscription_if_missing].filter(
      (v) => v !== undefined,
    );
    Object.assign(
      broker,
      defined({
        projectId: pubsub.project_id,
        topic: pubsub.topic,
        subscriptionId: pubsub.subscription,
        ackDeadlineSeconds: pubsub.ack_deadline_seconds,
        maxDeliveryAttempts: pubsub.dead_letter_max_attempts,
        retryMinBackoffSeconds: pubsub.retry_min_backoff,
        retryMaxBackoffSeconds: pubsub.retry_max_backoff,
        maxInFlight: parallelism ?? (pubsub.max_outstanding_messages || undefined),
        createIfMissing: create.length === 0 ? undefined : create.some(Boolean),
      }),
    );
  }
  if (parallelism !== undefined && broker.maxInFlight === undefined) broker.maxInFlight = parallelism;
  return { broker, problems };
}
