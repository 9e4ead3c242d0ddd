import { isDeepStrictEqual } from 'node:util';
import { API_BASE_PATH } from '../../hyperfleet/base-url.js';
import type {
  AdapterStatus,
  AdapterStatusCreateRequest,
  Cluster,
  ValidationError,
} from '../../hyperfleet/types.js';
import { aggregate } from './conditions.js';
import type { Contract } from './contract.js';
import { paginate, type Page, type SortKeys } from './paging.js';
import { ProblemError } from './problem.js';
import {
  checkReportRules,
  discardReason,
  toAdapterStatus,
  type DiscardReason,
  type TimeLimits,
} from './status-rules.js';
import { uuidv7 } from './uuid.js';

export interface StoreOptions {
  contract: Contract;
  /** Adapters whose reports decide `Reconciled` and the removal of a deleted cluster. */
  requiredAdapters: readonly string[];
  /** Written to `created_by` / `updated_by` / `deleted_by`. */
  identity: string;
  limits: TimeLimits;
  now: () => Date;
  /** Sees every valid report with what became of it (stored or discarded), in arrival order. */
  onReport?: (clusterId: string, report: AdapterStatusCreateRequest, result: PutStatusResult) => void;
}

/** What `PUT /statuses` did: 201 with the stored status, or 204 for a discarded report. */
export type PutStatusResult =
  { outcome: 'stored'; status: AdapterStatus } | { outcome: 'discarded'; reason: DiscardReason };

interface ClusterRecord {
  cluster: Cluster;
  statuses: Map<string, AdapterStatus>;
  lastKnownReconciledGeneration: number | undefined;
}

/** The persisted form of the whole state (see `persistence.ts`). */
export interface StoreSnapshot {
  format: 'hyperfleet-api-stand-in/1';
  clusters: { cluster: Cluster; statuses: AdapterStatus[]; last_known_reconciled_generation?: number }[];
}

const CLUSTER_KEYS: SortKeys<Cluster> = {
  value: (c, field) => c[field],
  id: (c) => c.id,
};
const STATUS_KEYS: SortKeys<AdapterStatus> = {
  value: (s, field) =>
    ({
      created_time: s.created_time,
      updated_time: s.last_report_time,
      name: s.adapter,
      generation: s.observed_generation,
    })[field],
  id: (s) => s.adapter,
};

/**
 * The stand-in's clusters and adapter statuses with the API's rules: generation 1 on create, +1 when
 * `spec` or `labels` change, +1 on delete (soft: `deleted_time` set, removal once every
 * required adapter reported `Finalized=True` at the current generation), and the status rules of
 * `status-rules.ts`. Every mutating method takes the raw request body and validates it against the
 * contract. Returned objects are copies.
 *
 * @throws ProblemError from every method that can fail as the API would
 */
export class ClusterStore {
  private readonly records = new Map<string, ClusterRecord>();

  constructor(private readonly options: StoreOptions) {}

  createCluster(body: unknown): Cluster {
    this.validate('ClusterCreateRequest', body);
    const request = body as {
      kind: string;
      name: string;
      labels?: Record<string, string>;
      spec: Record<string, unknown>;
    };
    if (request.kind !== 'Cluster')
      throw new ProblemError('validation', 'Invalid cluster', [
        { field: 'kind', constraint: 'enum', message: 'kind must be Cluster' },
      ]);
    if ([...this.records.values()].some((r) => r.cluster.name === request.name)) {
      throw new ProblemError('conflict', `Cluster with name='${request.name}' already exists`);
    }
    const now = this.nowIso();
    const id = uuidv7(this.options.now().getTime());
    const cluster: Cluster = {
      id,
      kind: 'Cluster',
      href: `${API_BASE_PATH}/clusters/${id}`,
      name: request.name,
      labels: structuredClone(request.labels ?? {}),
      spec: structuredClone(request.spec),
      generation: 1,
      status: { conditions: [] },
      created_time: now,
      updated_time: now,
      created_by: this.options.identity,
      updated_by: this.options.identity,
    };
    const record: ClusterRecord = { cluster, statuses: new Map(), lastKnownReconciledGeneration: undefined };
    this.records.set(id, record);
    this.reaggregate(record);
    return structuredClone(record.cluster);
  }

  getCluster(id: string): Cluster | undefined {
    const record = this.records.get(id);
    return record === undefined ? undefined : structuredClone(record.cluster);
  }

  listClusters(query: URLSearchParams = new URLSearchParams()): Page<Cluster> {
    return structuredClone(
      paginate(
        [...this.records.values()].map((r) => r.cluster),
        query,
        CLUSTER_KEYS,
      ),
    );
  }

  patchCluster(id: string, body: unknown): Cluster {
    this.validate('ClusterPatchRequest', body);
    const record = this.require(id);
    if (record.cluster.deleted_time !== undefined)
      throw new ProblemError('conflict', `Cluster with id='${shortId(id)}' is marked for deletion`);
    const patch = body as { spec?: Record<string, unknown>; labels?: Record<string, string> };
    const cluster = record.cluster;
    const specChanged = patch.spec !== undefined && !isDeepStrictEqual(patch.spec, cluster.spec);
    const labelsChanged = patch.labels !== undefined && !isDeepStrictEqual(patch.labels, cluster.labels);
    // Any change of spec or labels bumps the generation (hyperfleet-api pkg/services/cluster.go `Patch`).
    if (specChanged || labelsChanged) {
      if (patch.spec !== undefined) cluster.spec = structuredClone(patch.spec);
      if (patch.labels !== undefined) cluster.labels = structuredClone(patch.labels);
      cluster.generation += 1;
      cluster.updated_time = this.nowIso();
      cluster.updated_by = this.options.identity;
      this.reaggregate(record);
    }
    return structuredClone(cluster);
  }

  /** Soft delete; a second request for a cluster already being deleted changes nothing. */
  deleteCluster(id: string): Cluster {
    const record = this.require(id);
    const cluster = record.cluster;
    if (cluster.deleted_time === undefined) {
      const now = this.nowIso();
      cluster.deleted_time = now;
      cluster.deleted_by = this.options.identity;
      cluster.updated_time = now;
      cluster.updated_by = this.options.identity;
      cluster.generation += 1;
      this.reaggregate(record);
    }
    return structuredClone(cluster);
  }

  /** Validates, applies the discard rules, stores (full replacement) and re-aggregates. */
  putStatus(id: string, body: unknown): PutStatusResult {
    this.validate('AdapterStatusCreateRequest', body);
    const report = body as AdapterStatusCreateRequest;
    checkReportRules(report, this.options.now(), this.options.limits);
    const record = this.require(id);
    const stored = record.statuses.get(report.adapter);
    const reason = discardReason(report, record.cluster, stored);
    const result: PutStatusResult =
      reason !== undefined
        ? { outcome: 'discarded', reason }
        : { outcome: 'stored', status: toAdapterStatus(report, stored, this.options.now()) };
    if (result.outcome === 'stored') {
      record.statuses.set(report.adapter, result.status);
      this.reaggregate(record);
    }
    this.options.onReport?.(id, structuredClone(report), structuredClone(result));
    return structuredClone(result);
  }

  /** Every status of the cluster, oldest first, unpaged (for tests; the API's pages stop at 100). */
  allStatuses(id: string): AdapterStatus[] {
    const statuses = [...this.require(id).statuses.values()];
    const byAge = (a: AdapterStatus, b: AdapterStatus) =>
      a.created_time.localeCompare(b.created_time) || a.adapter.localeCompare(b.adapter);
    return structuredClone(statuses.sort(byAge));
  }

  listStatuses(id: string, query: URLSearchParams = new URLSearchParams()): Page<AdapterStatus> {
    const record = this.require(id);
    return structuredClone(paginate([...record.statuses.values()], query, STATUS_KEYS));
  }

  /**
   * Puts a fixture-like cluster in place as is (id, generation, labels, spec, conditions such as
   * `ValidationSuccessful`), filling in what is missing, then aggregates. For tests and `dev` seeding.
   *
   * @throws Error when the id is taken or the result is not a valid contract `Cluster`
   */
  seedCluster(seed: Partial<Cluster> & { spec: Record<string, unknown> }): Cluster {
    const now = this.nowIso();
    const id = seed.id ?? uuidv7(this.options.now().getTime());
    if (this.records.has(id)) throw new Error(`a cluster with id ${id} exists already`);
    const cluster: Cluster = {
      ...structuredClone(seed),
      id,
      kind: 'Cluster',
      href: `${API_BASE_PATH}/clusters/${id}`,
      name: seed.name ?? `cluster-${id.slice(0, 8)}`,
      labels: structuredClone(seed.labels ?? {}),
      generation: seed.generation ?? 1,
      status: { conditions: structuredClone(seed.status?.conditions ?? []) },
      created_time: seed.created_time ?? now,
      updated_time: seed.updated_time ?? now,
      created_by: seed.created_by ?? this.options.identity,
      updated_by: seed.updated_by ?? this.options.identity,
    };
    const record: ClusterRecord = { cluster, statuses: new Map(), lastKnownReconciledGeneration: undefined };
    this.reaggregate(record, false);
    const errors = this.options.contract.validate('Cluster', cluster);
    if (errors.length > 0)
      throw new Error(
        `seed is not a valid Cluster: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`,
      );
    this.records.set(id, record);
    return structuredClone(cluster);
  }

  snapshot(): StoreSnapshot {
    return structuredClone(this.liveSnapshot());
  }

  /** The snapshot as JSON text, serialized straight from the state (no copy): what persistence writes. */
  serialize(): string {
    return JSON.stringify(this.liveSnapshot());
  }

  /** The state in snapshot form, sharing the live objects: use it at once, never keep or change it. */
  private liveSnapshot(): StoreSnapshot {
    return {
      format: 'hyperfleet-api-stand-in/1',
      clusters: [...this.records.values()].map((r) => ({
        cluster: r.cluster,
        statuses: [...r.statuses.values()],
        ...(r.lastKnownReconciledGeneration === undefined
          ? {}
          : { last_known_reconciled_generation: r.lastKnownReconciledGeneration }),
      })),
    };
  }

  /** Replaces the state with a snapshot (already checked by the loader). */
  restore(snapshot: StoreSnapshot): void {
    this.records.clear();
    for (const entry of structuredClone(snapshot.clusters)) {
      this.records.set(entry.cluster.id, {
        cluster: entry.cluster,
        statuses: new Map(entry.statuses.map((s) => [s.adapter, s])),
        lastKnownReconciledGeneration: entry.last_known_reconciled_generation,
      });
    }
  }

  private reaggregate(record: ClusterRecord, mayRemove = true): void {
    const result = aggregate({
      cluster: record.cluster,
      statuses: [...record.statuses.values()],
      requiredAdapters: this.options.requiredAdapters,
      lastKnownReconciledGeneration: record.lastKnownReconciledGeneration,
      now: this.nowIso(),
    });
    record.cluster.status = { conditions: result.conditions };
    record.lastKnownReconciledGeneration = result.lastKnownReconciledGeneration;
    if (result.finalized && mayRemove) this.records.delete(record.cluster.id);
  }

  private require(id: string): ClusterRecord {
    const record = this.records.get(id);
    if (record === undefined)
      throw new ProblemError('notFound', `Cluster with id='${shortId(id)}' not found`);
    return record;
  }

  private validate(schema: string, body: unknown): void {
    const errors: ValidationError[] = this.options.contract.validate(schema, body);
    if (errors.length > 0) throw new ProblemError('validation', `Invalid ${schema}`, errors);
  }

  private nowIso(): string {
    return this.options.now().toISOString();
  }
}

/** Echoes an id from a URL in a message, bounded. */
function shortId(id: string): string {
  return id.length > 64 ? `${id.slice(0, 64)}…` : id;
}
