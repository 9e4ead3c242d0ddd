import type { Message, PubSub, Subscription } from '@google-cloud/pubsub';
import { describeError } from '../../errors/index.js';
import type { Logger } from '../../observability/logger.js';
import { backoffDelay, type RetryPolicy } from '../../util/retry.js';
import { createPubSubClient, loadCredentials } from './credentials.js';
import { classifyPubSubError, grpcCode } from './errors.js';

/** Pauses before re-opening a stream the client library closed: from 1 s, doubling, up to 5 minutes. */
const REOPEN: RetryPolicy = { maxAttempts: Infinity, baseDelayMs: 1000, maxDelayMs: 5 * 60_000 };

/** One notification as the subscriber hands it over: raw bytes and attributes, nothing parsed. */
interface RawNotification {
  id: string;
  data: Buffer;
  attributes: Readonly<Record<string, string>>;
}

/** Settings of a notification subscription (an existing one: it is never created here). */
interface NotificationSubscriberOptions {
  /** Subscription id, or its full name `projects/P/subscriptions/S`. */
  subscription: string;
  /** Project of the subscription; default what the client library finds. */
  projectId?: string | undefined;
  /** `host:port` of the API or an emulator; wins over PUBSUB_EMULATOR_HOST. */
  apiEndpoint?: string | undefined;
  /** Messages handled at once (flow control). */
  maxInFlight: number;
  logger: Logger;
}

/**
 * Consumes an existing Pub/Sub subscription with the official client: every message is handed to
 * `handle` and then acked, whatever it did (a notification is a trigger; one lost is covered by the
 * next resync, and one that cannot be understood would never be understood later). Stream errors
 * are logged (with the gRPC code, never message content). The client library re-opens its stream
 * after transient errors; a stream it closed (a missing subscription, a refused permission) is
 * re-opened here after 1 s, doubling up to 5 minutes (±20 % jitter), so fixing the subscription needs no restart.
 */
export class NotificationSubscriber {
  private client: PubSub | undefined;
  private subscription: Subscription | undefined;
  private readonly pending = new Set<Promise<void>>();
  private reopenTimer: NodeJS.Timeout | undefined;
  /** Errors in a row without a message since: the re-open backoff doubles with each. */
  private failures = 0;
  private stopped = false;

  constructor(private readonly options: NotificationSubscriberOptions) {}

  /**
   * Opens the stream. @throws PullSecretError CONFIG_INVALID when no Google credentials are usable.
   */
  async start(handle: (notification: RawNotification) => Promise<void> | void): Promise<void> {
    const client = createPubSubClient(this.options);
    this.client = client;
    await loadCredentials(client);
    const subscription = client.subscription(this.options.subscription, {
      flowControl: { maxMessages: this.options.maxInFlight, allowExcessMessages: false },
    });
    subscription.on('error', (err: unknown) => {
      if (this.stopped) return;
      this.failures += 1;
      const retryInMs = backoffDelay(REOPEN, this.failures);
      this.options.logger.warn(
        {
          operation: 'store-notifications',
          grpc_code: grpcCode(err),
          retry_in_ms: retryInMs,
          ...describeError(classifyPubSubError(err, 'receiving store notifications')),
        },
        'Store notification stream error; retrying',
      );
      clearTimeout(this.reopenTimer);
      this.reopenTimer = setTimeout(() => {
        if (!this.stopped && !subscription.isOpen) subscription.open();
      }, retryInMs);
      this.reopenTimer.unref();
    });
    subscription.on('message', (message: Message) => {
      this.failures = 0;
      const done = (async () => {
        try {
          await handle({ id: message.id, data: message.data, attributes: { ...message.attributes } });
        } catch {
          // The handler never throws; a notification is acked in any case.
        }
        message.ack();
      })();
      this.pending.add(done);
      void done.finally(() => this.pending.delete(done));
    });
    this.subscription = subscription;
  }

  /** Closes the stream (handlers under way finish first) and the client. Safe to call twice. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reopenTimer);
    const subscription = this.subscription;
    this.subscription = undefined;
    await subscription?.close().catch(() => undefined);
    subscription?.removeAllListeners();
    await Promise.all([...this.pending]);
    await this.client?.close().catch(() => undefined);
    this.client = undefined;
  }
}
