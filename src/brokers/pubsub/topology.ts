import type { CreateSubscriptionOptions, PubSub, Topic } from '@google-cloud/pubsub';
import { PullSecretError } from '../../errors/index.js';
import type { Logger } from '../../observability/logger.js';
import { quoteIdentifier } from '../../pullsecret/identifiers.js';
import { deadLetterTopicId, type PubSubBrokerConfig } from './config.js';
import { classifyPubSubError, grpcCode, Status } from './errors.js';

/** The topics the broker publishes to. */
export interface PubSubTopology {
  readonly topic: Topic;
  /** `{subscriptionId}-dlq`; absent when it does not exist and may not be created (rejects are then nacked). */
  readonly deadLetterTopic: Topic | undefined;
}

/** Longest retention Pub/Sub allows: dead letters are kept for a human to look at. */
const DEAD_LETTER_RETENTION_SECONDS = 7 * 24 * 3600;

interface Context {
  readonly client: PubSub;
  readonly config: PubSubBrokerConfig;
  readonly gaxOpts: { timeout: number };
  readonly logger: Logger | undefined;
}

function missing(kind: string, id: string): PullSecretError {
  return new PullSecretError(
    'CONFIG_INVALID',
    `Pub/Sub ${kind} ${quoteIdentifier(id)} does not exist and createIfMissing is off`,
  );
}

/** The topic, if it exists. */
async function findTopic(ctx: Context, id: string): Promise<Topic | undefined> {
  const topic = ctx.client.topic(id);
  try {
    await topic.getMetadata(ctx.gaxOpts);
    return topic;
  } catch (err) {
    if (grpcCode(err) !== Status.NOT_FOUND)
      throw classifyPubSubError(err, `reading topic ${quoteIdentifier(id)}`);
  }
  return undefined;
}

async function ensureTopic(ctx: Context, id: string): Promise<Topic> {
  const found = await findTopic(ctx, id);
  if (found !== undefined) return found;
  if (!ctx.config.createIfMissing) throw missing('topic', id);
  const topic = ctx.client.topic(id);
  try {
    await topic.create(ctx.gaxOpts);
    ctx.logger?.info({ broker: 'pubsub', topic: id }, 'broker created topic');
  } catch (err) {
    // Another replica created it first: fine.
    if (grpcCode(err) !== Status.ALREADY_EXISTS)
      throw classifyPubSubError(err, `creating topic ${quoteIdentifier(id)}`);
  }
  return topic;
}

async function ensureSubscription(
  ctx: Context,
  topic: Topic,
  id: string,
  options: CreateSubscriptionOptions,
): Promise<void> {
  const subscription = ctx.client.subscription(id);
  try {
    // An existing subscription is adopted as it is, never updated.
    const [metadata] = await subscription.getMetadata(ctx.gaxOpts);
    if (options.deadLetterPolicy !== undefined && !metadata.deadLetterPolicy?.deadLetterTopic) {
      ctx.logger?.warn(
        { broker: 'pubsub', subscription: id },
        'broker subscription has no dead-letter policy; rejected messages still go to the dead-letter topic',
      );
    }
    return;
  } catch (err) {
    if (grpcCode(err) !== Status.NOT_FOUND)
      throw classifyPubSubError(err, `reading subscription ${quoteIdentifier(id)}`);
  }
  if (!ctx.config.createIfMissing) throw missing('subscription', id);
  try {
    await topic.createSubscription(id, { ...options, gaxOpts: ctx.gaxOpts });
    ctx.logger?.info(
      { broker: 'pubsub', subscription: id, topic: topic.name },
      'broker created subscription',
    );
  } catch (err) {
    if (grpcCode(err) !== Status.ALREADY_EXISTS)
      throw classifyPubSubError(err, `creating subscription ${quoteIdentifier(id)}`);
  }
}

/**
 * Makes sure the topic, the subscription (with its dead-letter policy), the dead-letter topic
 * `{subscriptionId}-dlq` and a subscription of the same name on it exist (a topic without
 * subscriptions drops what it gets). Existing resources are used as they are, never updated. With
 * createIfMissing off, a missing dead-letter topic is a warning, not a refusal: the broker then nacks
 * what it rejects, and the subscription's own dead-letter policy (HyperFleet's Terraform sets one) or
 * its retry backoff takes over.
 * On real Pub/Sub, dead-lettering also needs the service agent to publish to the dead-letter topic
 * and subscribe to the subscription (an IAM setup step, outside this code).
 *
 * @throws PullSecretError CONFIG_INVALID (missing with createIfMissing off, refused names or
 *   permissions), BROKER_UNAVAILABLE (service unreachable).
 */
export async function ensureTopology(
  client: PubSub,
  config: PubSubBrokerConfig,
  options: { timeoutMs: number; logger?: Logger },
): Promise<PubSubTopology> {
  const ctx: Context = { client, config, gaxOpts: { timeout: options.timeoutMs }, logger: options.logger };
  const deadLetterId = deadLetterTopicId(config.subscriptionId);
  const topic = await ensureTopic(ctx, config.topic);
  const deadLetterTopic = config.createIfMissing
    ? await ensureTopic(ctx, deadLetterId)
    : await findTopic(ctx, deadLetterId);
  if (deadLetterTopic === undefined) {
    const fields = { broker: 'pubsub', dead_letter_topic: deadLetterId, subscription: config.subscriptionId };
    ctx.logger?.warn(
      fields,
      'broker dead-letter topic missing and createIfMissing is off; rejected messages are nacked',
    );
  } else {
    await ensureSubscription(ctx, deadLetterTopic, deadLetterId, {
      messageRetentionDuration: DEAD_LETTER_RETENTION_SECONDS,
    });
  }
  await ensureSubscription(ctx, topic, config.subscriptionId, {
    ackDeadlineSeconds: config.ackDeadlineSeconds,
    ...(deadLetterTopic === undefined
      ? {}
      : {
          deadLetterPolicy: {
            deadLetterTopic: deadLetterTopic.name,
            maxDeliveryAttempts: config.maxDeliveryAttempts,
          },
        }),
    retryPolicy: {
      minimumBackoff: { seconds: config.retryMinBackoffSeconds },
      maximumBackoff: { seconds: config.retryMaxBackoffSeconds },
    },
  });
  return { topic, deadLetterTopic };
}
