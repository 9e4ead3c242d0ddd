import { Counter, Histogram, type Registry } from 'prom-client';

/** What the retention runner reports; implemented by `RetentionMetrics`, or nothing in tests and jobs. */
export interface RetentionObserver {
  /** A retention pass listed a secret: how many versions it keeps (not destroyed) afterwards. */
  versions(store: string, kept: number): void;
  disabled(store: string): void;
  destroyed(store: string): void;
  /** A pass could not list or change a version (it is retried at the next reconcile). */
  failed(store: string): void;
}

/**
 * Retention metrics. Versions per secret is a histogram by store, not a gauge per secret: a label
 * per cluster would grow with the fleet.
 */
export class RetentionMetrics implements RetentionObserver {
  readonly secretVersions: Histogram;
  readonly disabledTotal: Counter;
  readonly destroyedTotal: Counter;
  readonly failuresTotal: Counter;

  constructor(registry: Registry, stores: readonly string[] = []) {
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
    for (const store of stores) {
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
}
