import { Counter, type Registry } from 'prom-client';

/** Why a copy was removed, as counted in `pullsecret_share_removals_total{reason}`. */
const REMOVAL_REASONS = ['revoked', 'unselected', 'share-deleted', 'source-deleted', 'invalid'] as const;
export type RemovalReason = (typeof REMOVAL_REASONS)[number];
const PROJECTION_OUTCOMES = ['created', 'updated'] as const;

/**
 * The share controller's counters, registered in the adapter's registry (label sets created up
 * front, so dashboards see zeros). Labels never carry names of namespaces or shares.
 */
export class ShareMetrics {
  readonly projections: Counter;
  readonly denials: Counter;
  readonly removals: Counter;

  constructor(registry: Registry) {
    this.projections = new Counter({
      name: 'pullsecret_share_projections_total',
      help: 'Copies of a shared Secret (pull secret or entitlement) written into consumer namespaces, by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.denials = new Counter({
      name: 'pullsecret_share_denials_total',
      help: 'Access reviews of share consumers that were denied',
      registers: [registry],
    });
    this.removals = new Counter({
      name: 'pullsecret_share_removals_total',
      help: 'Copies of a shared Secret (pull secret or entitlement) removed, by reason',
      labelNames: ['reason'],
      registers: [registry],
    });
    for (const outcome of PROJECTION_OUTCOMES) this.projections.inc({ outcome }, 0);
    for (const reason of REMOVAL_REASONS) this.removals.inc({ reason }, 0);
  }
}
