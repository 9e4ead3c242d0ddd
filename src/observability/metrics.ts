import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import {
  QUOTA_KINDS,
  quotaBucket,
  type PacingObserver,
  type QuotaKind,
} from '../stores/rate-limited-store.js';
import { storeFactories } from '../stores/registry.js';
import { RetentionMetrics } from '../retention/metrics.js';
import { EntitlementExpiry, EntitlementMetrics } from '../entitlements/expiry.js';
import type { TokenBucket } from '../util/token-bucket.js';
import { ShareMetrics } from '../shares/metrics.js';
import { NOTIFICATION_OUTCOMES, STORE_EVENT_TYPES } from '../notifications/read-notification.js';

/**
 * Results of one event, as counted in `pullsecret_events_total{result}`. `ignored`: an event about
 * another kind of resource than a cluster (e.g. a NodePool), acknowledged and never reconciled.
 */
export const EVENT_RESULTS = [
  'applied',
  'skipped',
  'failed',
  'invalid',
  'superseded',
  'gone',
  'finalized',
  'ignored',
] as const;
export type EventResult = (typeof EVENT_RESULTS)[number];

const JOB_RESULTS = ['success', 'failure', 'skipped'] as const;
/** `pullsecret_job_total{result}`. */
export type JobResult = (typeof JOB_RESULTS)[number];
const STATUS_RESULTS = ['stored', 'stale', 'gone', 'error'] as const;
const WRITE_OUTCOMES = ['created', 'updated', 'unchanged'] as const;
/** What was found changed on a managed Secret, as counted in `pullsecret_drift_repairs_total{kind}`. */
export const DRIFT_KINDS = ['deleted', 'data', 'type', 'labels'] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];
const WATCHED = ['secrets', 'jobs'] as const;
/** Labels of `pullsecret_transfer_checks_total{outcome}` (`TRANSFER_REASONS` labels, less `update`, which is always carried out). */
export const TRANSFER_OUTCOMES = [
  'none',
  'no_token',
  'current_invalid',
  'unchanged',
  'updated',
  'update_failed',
  'multiple',
  'corrupted',
  'unexpected',
  'refused',
  'unreachable',
] as const;
const RELIST_REASONS = ['expired', 'error'] as const;
/**
 * The service's Prometheus metrics (seed 001 names plus event counters), in their own registry.
 * Every label set is created up front so dashboards and alerts see zeros, not gaps.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly jobDuration = new Histogram({
    name: 'pullsecret_job_duration_seconds',
    help: 'Duration of one pull secret reconcile (store and Kubernetes steps, or the Kubernetes Job)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });
  readonly jobTotal = new Counter({
    name: 'pullsecret_job_total',
    help: 'Pull secret reconciles by result',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly storeApiCalls = new Counter({
    name: 'pullsecret_store_api_calls_total',
    help: "Secret store API calls by store, method and status code (the store's own code names)",
    labelNames: ['store', 'method', 'code'],
    registers: [this.registry],
  });
  readonly storeApiCallDuration = new Histogram({
    name: 'pullsecret_store_api_call_duration_seconds',
    help: 'Duration of one secret store API call, by store and method',
    labelNames: ['store', 'method'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  /** Counters a store keeps for its existing dashboards (GCP: `pullsecret_gcp_api_calls_total`), by store kind. */
  private readonly ownCounters = new Map<
    string,
    { counter: Counter; valueOf: (code: string) => string; label: string }
  >();
  readonly events = new Counter({
    name: 'pullsecret_events_total',
    help: 'Broker events handled, by result',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly eventDuration = new Histogram({
    name: 'pullsecret_event_processing_seconds',
    help: 'Time from taking an event to settling it (status reported)',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly statusReports = new Counter({
    name: 'pullsecret_status_reports_total',
    help: 'Status reports sent to the HyperFleet API, by result',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly kubernetesWrites = new Counter({
    name: 'pullsecret_kubernetes_secret_applies_total',
    help: 'Kubernetes Secret applies by outcome (unchanged = no write)',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  /** Live quota buckets by `store` and `quota` label values (one bucket per scope). */
  private readonly quotaBuckets = new Map<
    string,
    { labels: { store: string; quota: QuotaKind }; full: number; live: Set<TokenBucket> }
  >();
  readonly storeQuotaTokens = new Gauge({
    name: 'pullsecret_store_quota_tokens',
    help: "Tokens left in the store's quota bucket: the lowest among its scopes (GCP projects); full when none is in use",
    labelNames: ['store', 'quota'],
    registers: [this.registry],
    collect: () => {
      for (const { labels, full, live } of this.quotaBuckets.values()) {
        const levels = [...live].map((b) => b.available);
        this.storeQuotaTokens.set(
          labels,
          levels.length === 0 ? full : Math.floor(Math.min(...levels) * 100) / 100,
        );
      }
    },
  });
  readonly storeQuotaWaits = new Counter({
    name: 'pullsecret_store_quota_waits_total',
    help: 'Secret store calls that waited for a token of their quota (paced, not failed)',
    labelNames: ['store', 'quota'],
    registers: [this.registry],
  });
  readonly cacheObjects = new Gauge({
    name: 'pullsecret_kubernetes_cache_objects',
    help: "Objects held by the adapter's watch caches, by resource",
    labelNames: ['resource'],
    registers: [this.registry],
  });
  readonly relists = new Counter({
    name: 'pullsecret_kubernetes_relists_total',
    help: 'Lists made again by a watch, by resource and reason (expired: 410 Gone; error: a broken watch or failed list)',
    labelNames: ['resource', 'reason'],
    registers: [this.registry],
  });
  readonly driftRepairs = new Counter({
    name: 'pullsecret_drift_repairs_total',
    help: 'Managed Kubernetes Secrets changed by someone else and restored, by what was changed',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly transferChecks = new Counter({
    name: 'pullsecret_transfer_checks_total',
    help: 'Ownership transfer checks of a cluster (scheduled or on demand), by decision or outcome',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  /** Secret Manager event notifications by event type and outcome (src/notifications/). */
  readonly storeNotifications = new Counter({
    name: 'pullsecret_store_notifications_total',
    help: 'Secret store event notifications received (GCP Secret Manager), by event type and outcome (triggered, ignored, foreign, malformed)',
    labelNames: ['store', 'event_type', 'outcome'],
    registers: [this.registry],
  });
  private brokers: ReadonlyArray<{ readonly kind: string; isReady(): boolean }> = [];
  /** 1 while the broker is connected and consuming, 0 otherwise (read at each scrape, as /readyz reads it). */
  readonly brokerConnected = new Gauge({
    name: 'pullsecret_broker_connected',
    help: 'Whether the broker (RabbitMQ, Pub/Sub, embedded) is connected and consuming: 1 yes, 0 no',
    labelNames: ['broker'],
    registers: [this.registry],
    collect: () => {
      for (const broker of this.brokers)
        this.brokerConnected.set({ broker: broker.kind }, broker.isReady() ? 1 : 0);
    },
  });
  readonly inFlight = new Gauge({
    name: 'pullsecret_events_in_flight',
    help: 'Events being processed or waiting for their cluster',
    registers: [this.registry],
  });
  /** Version retention (docs/retention.md): versions per secret, disabled, destroyed, failures; by store. */
  readonly retention = new RetentionMetrics(
    this.registry,
    storeFactories().map((f) => f.kind),
  );
  /** Registry verification results by registry host and outcome (docs/verification.md); never a credential. */
  readonly registryVerifications = new Counter({
    name: 'pullsecret_registry_verifications_total',
    help: "Registry login checks of new pull secrets' credentials, by registry host and outcome (accepted, rejected, unreachable, skipped)",
    labelNames: ['registry', 'outcome'],
    registers: [this.registry],
  });
  /** The PullSecretShare controller's counters (docs/shares.md). */
  readonly shares = new ShareMetrics(this.registry);

  /** Entitlement certificates (docs/account-service.md): each cluster's expiry, aggregated over the fleet. */
  readonly entitlementExpiry = new EntitlementExpiry();
  readonly entitlements = new EntitlementMetrics(this.registry, this.entitlementExpiry);

  constructor(options: { defaultMetrics?: boolean } = {}) {
    for (const result of JOB_RESULTS) this.jobTotal.inc({ result }, 0);
    for (const store of storeFactories()) {
      const { methods, codes, ownCounter } = store.apiCalls;
      for (const method of methods) {
        for (const code of codes) this.storeApiCalls.inc({ store: store.kind, method, code }, 0);
        this.storeApiCallDuration.zero({ store: store.kind, method });
      }
      for (const quota of QUOTA_KINDS) {
        const limit = store.quotas[`${quota}PerMinute`];
        if (limit === undefined) continue;
        this.quotaBuckets.set(`${store.kind}/${quota}`, {
          labels: { store: store.kind, quota },
          full: quotaBucket(limit).burst,
          live: new Set(),
        });
        this.storeQuotaWaits.inc({ store: store.kind, quota }, 0);
      }
      if (ownCounter === undefined) continue;
      const counter = new Counter({
        name: ownCounter.name,
        help: ownCounter.help,
        labelNames: [ownCounter.label],
        registers: [this.registry],
      });
      for (const value of ownCounter.values) counter.inc({ [ownCounter.label]: value }, 0);
      this.ownCounters.set(store.kind, {
        counter,
        valueOf: (code) => ownCounter.valueOf(code),
        label: ownCounter.label,
      });
    }
    for (const result of EVENT_RESULTS) this.events.inc({ result }, 0);
    for (const result of STATUS_RESULTS) this.statusReports.inc({ result }, 0);
    for (const outcome of WRITE_OUTCOMES) this.kubernetesWrites.inc({ outcome }, 0);
    for (const resource of WATCHED) {
      this.cacheObjects.set({ resource }, 0);
      for (const reason of RELIST_REASONS) this.relists.inc({ resource, reason }, 0);
    }
    for (const kind of DRIFT_KINDS) this.driftRepairs.inc({ kind }, 0);
    for (const outcome of TRANSFER_OUTCOMES) this.transferChecks.inc({ outcome }, 0);
    for (const event_type of STORE_EVENT_TYPES)
      for (const outcome of NOTIFICATION_OUTCOMES)
        this.storeNotifications.inc({ store: 'gcp', event_type, outcome }, 0);
    if (options.defaultMetrics ?? true)
      collectDefaultMetrics({ register: this.registry, prefix: 'pullsecret_process_' });
  }

  /**
   * Observes one secret store API call: feeds `pullsecret_store_api_calls_total`, the duration
   * histogram and the store's own counter (GCP: `pullsecret_gcp_api_calls_total`). Never throws.
   */
  /** Reports `broker`'s connection in `pullsecret_broker_connected` from now on. */
  watchBroker(broker: { readonly kind: string; isReady(): boolean }): void {
    this.brokers = [...this.brokers, broker];
  }

  readonly onStoreApiCall = (method: string, code: string, durationMs: number, store: string): void => {
    this.storeApiCalls.inc({ store, method, code });
    this.storeApiCallDuration.observe({ store, method }, durationMs / 1000);
    const own = this.ownCounters.get(store);
    own?.counter.inc({ [own.label]: own.valueOf(code) });
  };

  /** Observes the stores' quota buckets (`StoreProvider`'s `pacing`). Never throws. */
  readonly storePacing: PacingObserver = {
    track: (store, quota, bucket) => this.quotaBucketsOf(store, quota).live.add(bucket),
    untrack: (store, quota, bucket) => this.quotaBucketsOf(store, quota).live.delete(bucket),
    waited: (store, quota) => this.storeQuotaWaits.inc({ store, quota }),
  };

  private quotaBucketsOf(store: string, quota: QuotaKind): { live: Set<TokenBucket> } {
    const key = `${store}/${quota}`;
    let entry = this.quotaBuckets.get(key);
    if (entry === undefined) {
      // A quota the descriptor did not declare but a caller paces anyway (an override).
      entry = { labels: { store, quota }, full: 0, live: new Set() };
      this.quotaBuckets.set(key, entry);
    }
    return entry;
  }
}
