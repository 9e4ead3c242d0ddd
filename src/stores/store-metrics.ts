import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { TokenBucket } from '../util/token-bucket.js';
import { QUOTA_KINDS, quotaBucket, type PacingObserver, type QuotaKind } from './rate-limited-store.js';
import { storeFactories } from './registry.js';

/**
 * The secret stores' metric families, on the service's registry: API calls and their duration by store,
 * method and code, each store's own counter (GCP: `pullsecret_gcp_api_calls_total`), and the quota
 * buckets. Every label set a store declares is created up front, so dashboards see zeros, not gaps.
 */
export class StoreMetrics {
  readonly storeApiCalls: Counter;
  readonly storeApiCallDuration: Histogram;
  readonly storeQuotaTokens: Gauge;
  readonly storeQuotaWaits: Counter;
  /** Counters a store keeps for its existing dashboards (GCP: `pullsecret_gcp_api_calls_total`), by store kind. */
  private readonly ownCounters = new Map<
    string,
    { counter: Counter; valueOf: (code: string) => string; label: string }
  >();
  /** Live quota buckets by `store` and `quota` label values (one bucket per scope). */
  private readonly quotaBuckets = new Map<
    string,
    { labels: { store: string; quota: QuotaKind }; full: number; live: Set<TokenBucket> }
  >();

  constructor(registry: Registry) {
    this.storeApiCalls = new Counter({
      name: 'pullsecret_store_api_calls_total',
      help: "Secret store API calls by store, method and status code (the store's own code names)",
      labelNames: ['store', 'method', 'code'],
      registers: [registry],
    });
    this.storeApiCallDuration = new Histogram({
      name: 'pullsecret_store_api_call_duration_seconds',
      help: 'Duration of one secret store API call, by store and method',
      labelNames: ['store', 'method'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    const quotaBuckets = this.quotaBuckets;
    this.storeQuotaTokens = new Gauge({
      name: 'pullsecret_store_quota_tokens',
      help:
        "Tokens left in the store's quota bucket: the lowest among its scopes (GCP projects); " +
        'full when none is in use',
      labelNames: ['store', 'quota'],
      registers: [registry],
      collect() {
        for (const { labels, full, live } of quotaBuckets.values()) {
          const levels = [...live].map((b) => b.available);
          this.set(labels, levels.length === 0 ? full : Math.floor(Math.min(...levels) * 100) / 100);
        }
      },
    });
    this.storeQuotaWaits = new Counter({
      name: 'pullsecret_store_quota_waits_total',
      help: 'Secret store calls that waited for a token of their quota (paced, not failed)',
      labelNames: ['store', 'quota'],
      registers: [registry],
    });
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
        registers: [registry],
      });
      for (const value of ownCounter.values) counter.inc({ [ownCounter.label]: value }, 0);
      this.ownCounters.set(store.kind, {
        counter,
        valueOf: (code) => ownCounter.valueOf(code),
        label: ownCounter.label,
      });
    }
  }

  /**
   * Observes one secret store API call: feeds `pullsecret_store_api_calls_total`, the duration
   * histogram and the store's own counter (GCP: `pullsecret_gcp_api_calls_total`). Never throws.
   */
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
