/**
 * Store notifications behind the store seam: a store that publishes the changes of its secrets (GCP
 * Secret Manager, to Pub/Sub) lets the adapter reconcile a cluster as soon as its secret changes,
 * rather than at the next resync (docs/architecture.md, "Store notifications"). The adapter asks here;
 * only src/stores/ knows which store sends them.
 */
export {
  notificationsProblems,
  notificationsSectionSchema,
  type NotificationsConfig,
} from './gcp-secret-manager/notifications/config.js';
export {
  startStoreNotifications,
  type RunningStoreNotifications,
} from './gcp-secret-manager/notifications/store-notifications.js';
export { storeNotificationsMetric } from './gcp-secret-manager/notifications/metrics.js';
