import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Results of one event, as counted in `pullsecret_events_total{result}`. `ignored`: an event about
 * another kind of resource than a cluster (e.g. a NodePool), acknowledged and never reconciled.
 */
const EVENT_RESULTS = [
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
const DRIFT_KINDS = ['deleted', 'data', 'type', 'labels'] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];
const WATCHED = ['secrets', 'jobs'] as const;
/**
 * Labels of `pullsecret_transfer_checks_total{outcome}` (`TRANSFER_REASONS` labels, less `update`,
 * which is always carried out).
 */
const TRANSFER_OUTCOMES = [
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
 * The service's Prometheus metrics, in their own registry: the reconcile and event counters and
 * histograms the deployment's dashboards and alerts read (docs/runbook.md), plus Node.js process
 * metrics. The stores and the features define their own families on `registry` (src/stores/store-metrics.ts,
 * each feature's metrics.ts); the composition root creates them (src/adapter/metrics.ts). Every label set is
 * created up front so dashboards and alerts see zeros, not gaps.
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
  readonly cacheObjects = new Gauge({
    name: 'pullsecret_kubernetes_cache_objects',
    help: "Objects held by the adapter's watch caches, by resource",
    labelNames: ['resource'],
    registers: [this.registry],
  });
  readonly relists = new Counter({
    name: 'pullsecret_kubernetes_relists_total',
    help:
      'Lists made again by a watch, by resource and reason (expired: 410 Gone; error: a broken watch ' +
      'or failed list)',
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
  /** Registry verification results by registry host and outcome (docs/verification.md); never a credential. */
  readonly registryVerifications = new Counter({
    name: 'pullsecret_registry_verifications_total',
    help:
      "Registry login checks of new pull secrets' credentials, by registry host and outcome " +
      '(accepted, rejected, unreachable, skipped)',
    labelNames: ['registry', 'outcome'],
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    for (const result of JOB_RESULTS) this.jobTotal.inc({ result }, 0);
    for (const result of EVENT_RESULTS) this.events.inc({ result }, 0);
    for (const result of STATUS_RESULTS) this.statusReports.inc({ result }, 0);
    for (const outcome of WRITE_OUTCOMES) this.kubernetesWrites.inc({ outcome }, 0);
    for (const resource of WATCHED) {
      this.cacheObjects.set({ resource }, 0);
      for (const reason of RELIST_REASONS) this.relists.inc({ resource, reason }, 0);
    }
    for (const kind of DRIFT_KINDS) this.driftRepairs.inc({ kind }, 0);
    for (const outcome of TRANSFER_OUTCOMES) this.transferChecks.inc({ outcome }, 0);
    if (options.defaultMetrics ?? true)
      collectDefaultMetrics({ register: this.registry, prefix: 'pullsecret_process_' });
  }

  /** Reports `broker`'s connection in `pullsecret_broker_connected` from now on. */
  watchBroker(broker: { readonly kind: string; isReady(): boolean }): void {
    this.brokers = [...this.brokers, broker];
  }
}
