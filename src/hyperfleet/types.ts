/**
 * Shapes of the HyperFleet API (contracts/hyperfleet-api-openapi-1.0.25.yaml) that this service
 * reads and writes. Names follow the contract's schemas so a reader can look them up there.
 */

/** `ResourceConditionStatus`: cluster conditions are never `Unknown`. */
export type ResourceConditionStatus = 'True' | 'False';

/** `AdapterConditionStatus`: what an adapter may report. */
export type AdapterConditionStatus = 'True' | 'False' | 'Unknown';

/** `ResourceCondition`: one aggregated condition on a cluster, e.g. `Reconciled`, `DnsSuccessful`. */
export interface ResourceCondition {
  type: string;
  status: ResourceConditionStatus;
  reason?: string;
  message?: string;
  observed_generation: number;
  created_time: string;
  last_updated_time: string;
  last_transition_time: string;
}

/**
 * `Cluster`. `id` is required here although the contract marks it optional: a cluster without an id
 * cannot be worked on, so the client rejects such a response. `labels` defaults to `{}` when absent.
 */
export interface Cluster {
  id: string;
  kind: string;
  href?: string;
  name: string;
  generation: number;
  labels: Record<string, string>;
  spec: Record<string, unknown>;
  status: { conditions: ResourceCondition[] };
  created_time: string;
  updated_time: string;
  created_by?: string;
  updated_by?: string;
  /** Set when deletion was requested; the cluster stays until every required adapter reports `Finalized=True`. */
  deleted_time?: string;
  deleted_by?: string;
}

/** `ClusterList`: one page of clusters. `size` is the number of items on this page. */
export interface ClusterList {
  page: number;
  size: number;
  total: number;
  items: Cluster[];
}

/** `ConditionRequest`: one condition in a status report. */
export interface ConditionRequest {
  type: string;
  status: AdapterConditionStatus;
  reason?: string;
  message?: string;
}

/** `AdapterStatusCreateRequest.metadata`: how the work was executed (e.g. the Kubernetes Job). */
export interface AdapterStatusMetadata {
  job_name?: string;
  job_namespace?: string;
  attempt?: number;
  started_time?: string;
  completed_time?: string;
  duration?: string;
}

/**
 * `AdapterStatusCreateRequest`: the body of `PUT /clusters/{id}/statuses`. Conditions `Applied`,
 * `Available` and `Health` are mandatory; `Finalized=True` lets a deleted cluster go.
 */
export interface AdapterStatusCreateRequest {
  adapter: string;
  observed_generation: number;
  /** RFC 3339; the API uses it as `last_report_time`. */
  observed_time: string;
  conditions: ConditionRequest[];
  data?: Record<string, unknown>;
  metadata?: AdapterStatusMetadata;
}

/** What this adapter sends: the contract's `AdapterStatusCreateRequest`. */
export type AdapterStatusReport = AdapterStatusCreateRequest;

/** `AdapterCondition`: a stored condition, with the API-managed transition time. */
export interface AdapterCondition extends ConditionRequest {
  last_transition_time: string;
}

/** `AdapterStatus`: a stored report as the API returns it. */
export interface AdapterStatus {
  adapter: string;
  observed_generation: number;
  conditions: AdapterCondition[];
  data?: Record<string, unknown>;
  metadata?: AdapterStatusMetadata;
  created_time: string;
  last_report_time: string;
}

/** `AdapterStatusList`: one page of adapter statuses. */
export interface AdapterStatusList {
  page: number;
  size: number;
  total: number;
  items: AdapterStatus[];
}

/** The conditions every status report must carry (the API answers 400 otherwise). */
export const MANDATORY_CONDITIONS = ['Applied', 'Available', 'Health'] as const;

/** `ValidationError`: one field-level problem in a problem+json answer. */
export interface ValidationError {
  field: string;
  message: string;
  constraint?: string;
  value?: unknown;
}

/** `ProblemDetails` (RFC 9457) as the API sends it, with `code` like `HYPERFLEET-NTF-001`. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  code?: string;
  timestamp?: string;
  trace_id?: string;
  errors?: ValidationError[];
}
