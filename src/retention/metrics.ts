import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What the lag gauges read at each scrape: a retention runner's in-memory view (no store call). */
export interface RetentionLagSource {
  /** The configured grace (`retention.graceHours`), in seconds. */
  readonly graceSeconds: number;
  /** By store kind: seconds since the retire time of the oldest version not retired yet; stores with none absent. */
  lagSeconds(): ReadonlyMap<string, number>;
}

/** What the retention runner reports; implemented by `RetentionMetrics`, or nothing in tests and jobs. */
export interface RetentionObserver {
  /** A retention pass listed a secret: how many versions it keeps (not destroyed) afterwards. */
  versions(store: string, kept: number): void;
  disabled(store: string): void;
  destroyed(store: string): void;
  /** A pass could not list or change a version (it is retried at the next reconcile). */
  failed(store: string): void;
  /** The runner whose lag the gauges show (the adapter has one). */
  watch(source: RetentionLagSource): void;
}

/**
 * Retention metrics. Versions per secret is a histogram by store, not a gauge per secret, and the lag
 * a maximum by store: a label per cluster would grow with the fleet.
 */
export class RetentionMetrics implements RetentionObserver {
  readonly secretVersions: Histogram;
  readonly disabledTotal: Counter;
  readonly destroyedTotal: Counter;
  readonly failuresTotal: Counter;
  readonly lagSeconds: Gauge;
  readonly graceSeconds: Gauge;
  #source: RetentionLagSource | undefined;

  constructor(registry: Registry, stores: readonly string[] = []) {
    const source = () => this.#source;
    this.secretVersions = new Histogram({
      name: 'pullsecret_secret_versions',
      help: 'Versions a secret keeps (not destroyed) after a retention pass, by store',
      labelNames: ['store'],
      buckets: [1, 2, 3, 5, 8, 10, 20, 50, 100],
      registers: [registry],
    });
    this.disabledTotal = new Counter({
      name: 'pullsecret_versions_disabled_total',
      help: 'Secret versions disabled by retention after their grace',
      labelNames: ['store'],
      registers: [registry],
    });
    this.destroyedTotal = new Counter({
      name: 'pullsecret_versions_destroyed_total',
      help: 'Secret versions destroyed by retention',
      labelNames: ['store'],
      registers: [registry],
    });
    this.failuresTotal = new Counter({
      name: 'pullsecret_retention_failures_total',
      help: 'Retention passes that could not list or change a version (retried at the next reconcile)',
      labelNames: ['store'],
      registers: [registry],
    });
    this.lagSeconds = new Gauge({
      name: 'pullsecret_retention_lag_seconds',
      help: 'Seconds since the retire time of the oldest version not retired yet, by store (0 when none)',
      labelNames: ['store'],
      registers: [registry],
      collect() {
        const lag = source()?.lagSeconds();
        for (const store of new Set([...stores, ...(lag?.keys() ?? [])]))
          this.set({ store }, lag?.get(store) ?? 0);
      },
    });
    this.graceSeconds = new Gauge({
      name: 'pullsecret_retention_grace_seconds',
      help: 'Grace of superseded versions (retention.graceHours) in seconds; 0 while retention is off',
      registers: [registry],
      collect() {
        this.set(source()?.graceSeconds ?? 0);
      },
    });
    for (const store of stores) {
      this.lagSeconds.set({ store }, 0);
      this.disabledTotal.inc({ store }, 0);
      this.destroyedTotal.inc({ store }, 0);
      this.failuresTotal.inc({ store }, 0);
    }
  }

  versions(store: string, kept: number): void {
    this.secretVersions.observe({ store }, kept);
  }
  disabled(store: string): void {
    this.disabledTotal.inc({ store });
  }
  destroyed(store: string): void {
    this.destroyedTotal.inc({ store });
  }
  failed(store: string): void {
    this.failuresTotal.inc({ store });
  }
  watch(source: RetentionLagSource): void {
    this.#source = source;
  }
}
