import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Results of one event, as counted in `pullsecret_events_total{result}`. */
export const EVENT_RESULTS = ['applied', 'skipped', 'failed', 'invalid', 'superseded', 'gone', 'finalized'] as const;
export type EventResult = (typeof EVENT_RESULTS)[number];

const JOB_RESULTS = ['success', 'failure', 'skipped'] as const;
const STATUS_RESULTS = ['stored', 'stale', 'gone', 'error'] as const;
const WRITE_OUTCOMES = ['created', 'updated', 'unchanged'] as const;
/** HTTP-style codes for Secret Manager calls, so seed 001's alerts (`status_code="429"`) work as written. */
const GCP_STATUS_CODES = ['200', '400', '401', '403', '404', '409', '429', '499', '500', '503', '504'] as const;

/** gRPC status name → the HTTP code Google's APIs map it to. */
const GRPC_TO_HTTP: Readonly<Record<string, string>> = {
  OK: '200', INVALID_ARGUMENT: '400', FAILED_PRECONDITION: '400', OUT_OF_RANGE: '400', UNAUTHENTICATED: '401',
  PERMISSION_DENIED: '403', NOT_FOUND: '404', ALREADY_EXISTS: '409', ABORTED: '409', RESOURCE_EXHAUSTED: '429',
  CANCELLED: '499', INTERNAL: '500', UNKNOWN: '500', DATA_LOSS: '500', UNIMPLEMENTED: '501', UNAVAILABLE: '503',
  DEADLINE_EXCEEDED: '504',
};

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
  readonly jobTotal = new Counter({ name: 'pullsecret_job_total', help: 'Pull secret reconciles by result', labelNames: ['result'], registers: [this.registry] });
  readonly gcpApiCalls = new Counter({
    name: 'pullsecret_gcp_api_calls_total',
    help: 'GCP Secret Manager API calls by HTTP-equivalent status code',
    labelNames: ['status_code'],
    registers: [this.registry],
  });
  readonly events = new Counter({ name: 'pullsecret_events_total', help: 'Broker events handled, by result', labelNames: ['result'], registers: [this.registry] });
  readonly eventDuration = new Histogram({
    name: 'pullsecret_event_processing_seconds',
    help: 'Time from taking an event to settling it (status reported)',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly statusReports = new Counter({ name: 'pullsecret_status_reports_total', help: 'Status reports sent to the HyperFleet API, by result', labelNames: ['result'], registers: [this.registry] });
  readonly kubernetesWrites = new Counter({ name: 'pullsecret_kubernetes_secret_applies_total', help: 'Kubernetes Secret applies by outcome (unchanged = no write)', labelNames: ['outcome'], registers: [this.registry] });
  readonly inFlight = new Gauge({ name: 'pullsecret_events_in_flight', help: 'Events being processed or waiting for their cluster', registers: [this.registry] });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    for (const result of JOB_RESULTS) this.jobTotal.inc({ result }, 0);
    for (const code of GCP_STATUS_CODES) this.gcpApiCalls.inc({ status_code: code }, 0);
    for (const result of EVENT_RESULTS) this.events.inc({ result }, 0);
    for (const result of STATUS_RESULTS) this.statusReports.inc({ result }, 0);
    for (const outcome of WRITE_OUTCOMES) this.kubernetesWrites.inc({ outcome }, 0);
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'pullsecret_process_' });
  }

  /** Feeds `pullsecret_gcp_api_calls_total` from the GCP store's per-call hook. */
  readonly onGcpApiCall = (_method: string, code: string): void => {
    this.gcpApiCalls.inc({ status_code: GRPC_TO_HTTP[code] ?? '500' });
  };
}
