import { Counter, Gauge, type Registry } from 'prom-client';

/** The window `pullsecret_entitlement_expiring_clusters` counts and the alert fires on: 7 days. */
const EXPIRING_SOON_MS = 7 * 86_400_000;

/**
 * Expiry of each cluster's entitlement certificate, in memory (O(clusters)). Metrics aggregate it
 * over the fleet: a label per cluster would grow with the fleet.
 */
export class EntitlementExpiry {
  private readonly byCluster = new Map<string, number>();

  record(clusterId: string, expiresAt: Date | string): void {
    this.byCluster.set(clusterId, new Date(expiresAt).getTime());
  }

  forget(clusterId: string): void {
    this.byCluster.delete(clusterId);
  }

  /** The cluster's certificate expiry (RFC 3339), for status `data.entitlementExpiresAt`. */
  expiresAt(clusterId: string): string | undefined {
    const ms = this.byCluster.get(clusterId);
    return ms === undefined ? undefined : new Date(ms).toISOString();
  }

  /** Clusters whose certificate expires within `windowMs` of `now` (expired ones included). */
  expiringWithin(windowMs: number, now = Date.now()): number {
    let n = 0;
    for (const ms of this.byCluster.values()) if (ms - now <= windowMs) n += 1;
    return n;
  }

  /** Seconds until the soonest expiry (negative when one has lapsed); `undefined` with no cluster. */
  minSecondsToExpiry(now = Date.now()): number | undefined {
    let min: number | undefined;
    for (const ms of this.byCluster.values()) min = min === undefined ? ms : Math.min(min, ms);
    return min === undefined ? undefined : (min - now) / 1000;
  }
}

/** Values of `pullsecret_entitlement_refreshes_total{result}` (ENTITLEMENT_REASONS labels), created at zero. */
const REFRESH_RESULTS = ['refreshed', 'no_token', 'refused', 'unexpected', 'unreachable', 'failed'] as const;

/** Entitlement metrics (docs/account-service.md): refreshes by result, fleet-wide expiry gauges computed at scrape. */
export class EntitlementMetrics {
  readonly refreshes: Counter;
  readonly expiring: Gauge;
  readonly minSeconds: Gauge;

  constructor(registry: Registry, expiry: EntitlementExpiry, now: () => number = Date.now) {
    this.refreshes = new Counter({
      name: 'pullsecret_entitlement_refreshes_total',
      help: 'Entitlement certificate refreshes, by result',
      labelNames: ['result'],
      registers: [registry],
    });
    for (const result of REFRESH_RESULTS) this.refreshes.inc({ result }, 0);
    this.expiring = new Gauge({
      name: 'pullsecret_entitlement_expiring_clusters',
      help: 'Clusters whose entitlement certificate expires within 7 days (or has expired)',
      registers: [registry],
      collect() {
        this.set(expiry.expiringWithin(EXPIRING_SOON_MS, now()));
      },
    });
    this.minSeconds = new Gauge({
      name: 'pullsecret_entitlement_expiry_min_seconds',
      help: 'Seconds until the soonest entitlement certificate expiry across clusters (absent with none)',
      registers: [registry],
      collect() {
        const min = expiry.minSecondsToExpiry(now());
        if (min === undefined) this.reset();
        else this.set(min);
      },
    });
  }
}
