import { Counter, type Registry } from 'prom-client';
import { NOTIFICATION_OUTCOMES, STORE_EVENT_TYPES, type NotificationOutcome } from './read-notification.js';

/** The store label of the notifications: only GCP Secret Manager sends them. */
const STORE = 'gcp';

/**
 * `pullsecret_store_notifications_total`: Secret Manager event notifications by event type and
 * outcome, every label set created up front. Returns the count function the subscriber calls.
 */
export function storeNotificationsMetric(registry: Registry): {
  counter: Counter;
  count: (eventType: string, outcome: NotificationOutcome) => void;
} {
  const counter = new Counter({
    name: 'pullsecret_store_notifications_total',
    help:
      'Secret store event notifications received (GCP Secret Manager), by event type and outcome ' +
      '(triggered, ignored, foreign, malformed)',
    labelNames: ['store', 'event_type', 'outcome'],
    registers: [registry],
  });
  for (const event_type of STORE_EVENT_TYPES)
    for (const outcome of NOTIFICATION_OUTCOMES) counter.inc({ store: STORE, event_type, outcome }, 0);
  return { counter, count: (event_type, outcome) => counter.inc({ store: STORE, event_type, outcome }) };
}
