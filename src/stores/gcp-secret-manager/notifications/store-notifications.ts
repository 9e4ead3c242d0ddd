import { describeError } from '../../../errors/index.js';
import type { Logger } from '../../../observability/logger.js';
import type { NotificationsConfig } from './config.js';
import { readNotification, type NotificationOutcome, type StoreEventType } from './read-notification.js';

/**
 * Store notifications: Secret Manager publishes every change of a secret with `topics` (a version
 * added, disabled, destroyed, the rotation time reached...) to Pub/Sub; this consumer reads them
 * from a subscription and reconciles the cluster of each of our secrets at once, through the same
 * path and per-cluster scheduler as a broker event (`EventPipeline.reconcile`), so a version added
 * or disabled by someone else is noticed in seconds rather than at the next resync. Notifications
 * of other secrets are counted and ignored; malformed ones are counted, logged (event type and a
 * fixed reason only) and acked. Message data is never logged.
 */

/** A subscription the notifications arrive on; each message is acked once `handle` returned. */
interface NotificationSubscription {
  start(
    handle: (message: { id: string; data: Buffer; attributes: Readonly<Record<string, string>> }) => void,
  ): Promise<void>;
  stop(): Promise<void>;
}

/** What the consumer needs from the adapter. */
interface StoreNotificationDeps {
  /**
   * Opens the Pub/Sub subscription (the Pub/Sub client lives with the Pub/Sub broker, in
   * src/brokers/pubsub); called only when notifications are enabled.
   */
  subscribe: (options: {
    subscription: string;
    projectId?: string | undefined;
    apiEndpoint?: string | undefined;
    maxInFlight: number;
    logger: Logger;
  }) => Promise<NotificationSubscription>;
  /** Reconciles a cluster (`EventPipeline.reconcile`); never throws. */
  reconcile: (clusterId: string) => Promise<unknown>;
  /** Counts a notification (`pullsecret_store_notifications_total`). */
  count: (eventType: StoreEventType, outcome: NotificationOutcome) => void;
  logger: Logger;
}

/** Handles one notification (id, data, attributes); never throws. */
function notificationHandler(
  deps: StoreNotificationDeps,
): (message: { id: string; data: Buffer; attributes: Readonly<Record<string, string>> }) => void {
  return (message) => {
    let reading;
    try {
      reading = readNotification(message);
    } catch (err) {
      reading = {
        eventType: 'other' as const,
        outcome: 'malformed' as const,
        problem: `unreadable (${describeError(err).error_code})`,
      };
    }
    deps.count(reading.eventType, reading.outcome);
    const fields = { operation: 'store-notification', event_type: reading.eventType, message_id: message.id };
    if (reading.outcome === 'malformed') {
      deps.logger.warn({ ...fields, reason: reading.problem }, 'Ignored a malformed store notification');
      return;
    }
    if (reading.outcome !== 'triggered' || reading.clusterId === undefined) {
      deps.logger.debug({ ...fields, outcome: reading.outcome }, 'Store notification needs no reconcile');
      return;
    }
    deps.logger.info(
      { ...fields, cluster_id: reading.clusterId },
      'Store notification: reconciling the cluster',
    );
    // Not awaited: the scheduler runs it in turn (and merges it with any waiting work of the cluster).
    void deps.reconcile(reading.clusterId);
  };
}

/** A running consumer. */
export interface RunningStoreNotifications {
  stop(): Promise<void>;
}

/**
 * Starts the consumer when `config.enabled`: the Pub/Sub subscriber is loaded only then.
 * @throws PullSecretError CONFIG_INVALID when no Google credentials are usable.
 */
export async function startStoreNotifications(
  config: NotificationsConfig,
  deps: StoreNotificationDeps,
): Promise<RunningStoreNotifications> {
  if (!config.enabled || config.subscription === undefined) return { stop: () => Promise.resolve() };
  const subscriber = await deps.subscribe({
    subscription: config.subscription,
    projectId: config.projectId,
    apiEndpoint: config.apiEndpoint,
    maxInFlight: config.maxInFlight,
    logger: deps.logger,
  });
  await subscriber.start(notificationHandler(deps));
  deps.logger.info(
    { operation: 'store-notifications', subscription: config.subscription },
    'Consuming store notifications',
  );
  return { stop: () => subscriber.stop() };
}
