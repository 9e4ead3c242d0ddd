import { EntitlementExpiry, EntitlementMetrics } from '../entitlements/expiry.js';
import { storeNotificationsMetric } from '../stores/notifications.js';
import { Gauge } from 'prom-client';
import { Metrics } from '../observability/metrics.js';
import { RetentionMetrics } from '../retention/metrics.js';
import { ShareMetrics } from '../shares/metrics.js';
import { storeFactories } from '../stores/registry.js';
import { StoreMetrics } from '../stores/store-metrics.js';

/**
 * The adapter's metrics: the service's (observability) plus the families the stores and the feature
 * plug-ins define in their own folders, all on the one registry. Names, labels and help texts are the
 * ones the dashboards and alerts read.
 */
export class AdapterMetrics extends Metrics {
  private readonly stores = new StoreMetrics(this.registry);
  readonly storeApiCalls = this.stores.storeApiCalls;
  readonly onStoreApiCall = this.stores.onStoreApiCall;
  readonly storePacing = this.stores.storePacing;
  private readonly notifications = storeNotificationsMetric(this.registry);
  /** Counts one store notification (`pullsecret_store_notifications_total`). */
  readonly countStoreNotification = this.notifications.count;
  /** Version retention (docs/retention.md): versions per secret, disabled, destroyed, failures; by store. */
  readonly retention = new RetentionMetrics(
    this.registry,
    storeFactories().map((f) => f.kind),
  );
  /** The PullSecretShare controller's counters (docs/shares.md). */
  readonly shares = new ShareMetrics(this.registry);
  /** Entitlement certificates (docs/account-service.md): each cluster's expiry, aggregated over the fleet. */
  readonly entitlementExpiry = new EntitlementExpiry();
  readonly entitlements = new EntitlementMetrics(this.registry, this.entitlementExpiry);
  /** 1 while this replica holds the leader Lease and runs the once-per-fleet loops (docs/architecture.md). */
  readonly leader = new Gauge({
    name: 'pullsecret_leader',
    help: 'Whether this replica leads (runs transfer checks, entitlement refreshes, the share controller): 1 yes, 0 no',
    registers: [this.registry],
  });
}
