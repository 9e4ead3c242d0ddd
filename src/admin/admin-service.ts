import { randomUUID } from 'node:crypto';
import type { Disposition, InboundMessage } from '../brokers/broker.js';
import { readClusterParams, type FieldPaths } from '../reconcile/cluster-params.js';
import type { ProviderRoutes } from '../reconcile/provider-routes.js';
import type { StoreProvider, StoreTarget } from '../reconcile/store-provider.js';
import type { PinFacts } from '../reconcile/steps.js';
import type { RollbackRequest, RollbackResult } from '../retention/rollback.js';
import { ADAPTER_NAME } from '../reconcile/status-report.js';
import { PullSecretError, toPullSecretError } from '../errors/index.js';
import { RECONCILE_EVENT_TYPE } from '../events/cluster-event.js';
import type { HyperFleetClient } from '../hyperfleet/index.js';
import { deriveClusterNames } from '../pullsecret/cluster-names.js';
import { pinFacts } from '../retention/pin-step.js';
import { collectStatusRows, findAdapterStatus } from '../status-view/read-statuses.js';
import {
  explainRow,
  toStatusRow,
  type ClusterStatusRow,
  type ReportView,
} from '../status-view/status-row.js';
import { clusterState, type ClusterFilter } from './cluster-state.js';
import { TRANSFER_REASONS } from '../account-service/transfer-check.js';
import type { TransferRun } from '../account-service/transfer-task.js';

/** Source of the events the admin API submits (an operator's request, not the Sentinel). */
const ADMIN_EVENT_SOURCE = 'pull-secret-admin';

export interface AdminServiceDeps {
  api: HyperFleetClient;
  stores: StoreProvider;
  fieldPaths: FieldPaths;
  /** Which store serves a cluster, and the store settings it gives (its provider's route). */
  routes: ProviderRoutes;
  writesKubernetes: boolean;
  /**
   * The adapter's event handler (pipeline.handle): the reconcile runs exactly as an event's, through
   * the per-cluster scheduler.
   */
  handleEvent: (message: InboundMessage, signal?: AbortSignal) => Promise<Disposition>;
  /** One ownership transfer check and apply through the per-cluster scheduler; absent without `accountService`. */
  checkTransfer?: (clusterId: string) => Promise<TransferRun>;
  /** Runs a rollback in the cluster's scheduler slot (service.ts); absent: rollback is not offered (404). */
  rollback?: (target: StoreTarget, request: RollbackRequest) => Promise<RollbackResult>;
  /** Ends a cluster's rollback pin (true: there was one); absent: no pin store, release is not offered. */
  releasePin?: (clusterId: string, by: string) => Promise<boolean>;
}

/** What a rollback is asked to do besides its version: the pin's who, why and until when. */
export interface RollbackAsk {
  toVersion?: string;
  reason?: string;
  /** RFC 3339 time the pin ends by itself. */
  expiresAt?: string;
  by: string;
}

/** What `POST clusters/{id}/rollback-release` answers. */
export interface ReleaseView {
  id: string;
  /** False: the cluster had no pin (nothing changed). */
  released: boolean;
  /** The reconcile that served the spec again (`done`, `retrying`), after a release. */
  reconcile?: string;
}

/**
 * What `POST clusters/{id}/transfer-check` answers: the decision (docs/account-service.md), never a
 * credential. `result`: `checked` (see `outcome`), `skipped` (not checked: preconditions, no store,
 * the pull secret unreadable), `superseded` (an event of the cluster replaced it; try again), `failed`.
 */
export interface TransferCheckView {
  id: string;
  result: 'checked' | 'skipped' | 'superseded' | 'failed';
  /** The metric label of the decision or outcome (`none`, `unchanged`, `updated`, `unreachable`, ...). */
  outcome?: string;
  /** Its condition reason (`NoTransferOpen`, `TransferApplied`, ...). */
  reason?: string;
  transferId?: string;
  transferIds?: string[];
  appliedAt?: string;
  /** Registry names the transfer replaced or added (names only). */
  replaced?: string[];
  added?: string[];
  message?: string;
  errorCode?: string;
}

/** What `POST clusters/{id}/rollback` answers (never a payload). */
export interface RollbackView {
  id: string;
  secretPath: string;
  fromVersion: string;
  restoredVersion: string;
  /** The new version holding the restored content. */
  version?: string;
  outcome: string;
  kubernetesSecret?: { namespace: string; name: string; outcome: string };
  /** The pin recorded (docs/retention.md): every reconcile serves this content until it ends. */
  pin?: PinFacts;
  /** The reconcile that followed (`done`, `retrying`, `failed`). */
  reconcile?: string;
}

/** One stored version, without payload. */
interface VersionView {
  version: string;
  state: string;
  createdTime: string;
}

/** What `GET clusters/{id}` answers. Built from metadata and status only: never a payload. */
export interface ClusterView {
  id: string;
  name: string;
  generation: number;
  state: ClusterFilter;
  /** Why it is not healthy, in words; absent when healthy. */
  explanation?: string;
  /** The adapter's last report (conditions, secret version); absent before the first one. */
  report?: ReportView;
  store: {
    kind: string;
    secretId?: string;
    path?: string;
    versions?: VersionView[];
    error?: { code: string; message: string };
  };
  /** Where the Kubernetes Secret is (or would be) written; absent when the adapter writes none. */
  kubernetesSecret?: { namespace: string; name: string };
}

/** The outcome of an admin reconcile. */
export interface ReconcileView {
  id: string;
  generation: number;
  /**
   * `done`: the reconcile ran and reported (see the conditions); `retrying`: it failed transiently and
   * the adapter will retry; `gone`: the cluster no longer exists.
   */
  result: 'done' | 'retrying' | 'gone';
  state?: ClusterFilter;
  explanation?: string;
  report?: ReportView;
}

/**
 * The admin API's reads and actions, independent of HTTP. Reads come from the HyperFleet API and the
 * store's metadata (`describe`), so any replica answers alike; a reconcile goes through the adapter's
 * own event handler and therefore its per-cluster scheduler.
 */
export class AdminService {
  constructor(private readonly deps: AdminServiceDeps) {}

  /**
   * One cluster's state, or undefined when the cluster does not exist. A store that cannot be read
   * shows as `store.error`, not a failed request.
   * @throws API_* from the HyperFleet API
   */
  async cluster(id: string, signal?: AbortSignal): Promise<ClusterView | undefined> {
    const cluster = await this.deps.api.getCluster(id, { signal });
    if (cluster === undefined) return undefined;
    const row = toStatusRow(cluster, await findAdapterStatus(this.deps.api, id, ADAPTER_NAME, signal));
    const params = readClusterParams(cluster, this.deps.fieldPaths);
    const route = this.deps.routes.route(cluster, params.provider);
    const view: ClusterView = { ...rowSummary(row), store: { kind: route?.store ?? 'none' } };
    try {
      if (route === undefined)
        throw new PullSecretError('CONFIG_INVALID', this.deps.routes.unmappedMessage(params.provider));
      const names = deriveClusterNames({
        clusterId: cluster.id,
        secretName: params.secretName,
        namespace: params.namespace,
        kubernetes: this.deps.writesKubernetes,
      });
      view.store.secretId = names.secretId;
      if (this.deps.writesKubernetes)
        view.kubernetesSecret = { namespace: names.namespace, name: names.kubernetesSecretName };
      const store = await this.deps.stores.forTarget({ provider: route.provider, settings: route.settings });
      const described = await store.describe(names.secretId, { signal });
      view.store.path = store.secretPath(names.secretId);
      view.store.versions = (described?.versions ?? []).map((v) => ({
        version: v.version,
        state: v.state,
        createdTime: v.createdTime,
      }));
    } catch (err) {
      const error = toPullSecretError(err);
      view.store.error = { code: error.code, message: error.message };
    }
    return view;
  }

  /** Every cluster's summary, optionally only those in `filter`. @throws API_* from the HyperFleet API */
  async list(
    filter: ClusterFilter | undefined,
    signal?: AbortSignal,
  ): Promise<Array<ReturnType<typeof rowSummary>>> {
    const rows = await collectStatusRows(this.deps.api, { signal });
    return rows.map(rowSummary).filter((r) => filter === undefined || r.state === filter);
  }

  /**
   * Reconciles one cluster now, as an event of its current generation would, and answers with the
   * status it then reported. Waits for a running reconcile of the same cluster first (scheduler).
   * @throws API_* from the HyperFleet API
   */
  /** True when this adapter runs transfer checks (`accountService` configured). */
  get checksTransfers(): boolean {
    return this.deps.checkTransfer !== undefined;
  }

  /**
   * Checks the cluster's ownership transfer now and applies an accepted one, through the per-cluster
   * scheduler (after any running work of the cluster), and answers with the decision.
   * @returns undefined when the cluster does not exist (or is being deleted)
   */
  async transferCheck(id: string): Promise<TransferCheckView | undefined> {
    const check = this.deps.checkTransfer;
    if (check === undefined) throw new PullSecretError('INTERNAL', 'transfer checks are not configured');
    const run = await check(id);
    return run.kind === 'gone' ? undefined : transferCheckView(id, run);
  }

  async reconcile(id: string, signal?: AbortSignal): Promise<ReconcileView | undefined> {
    const cluster = await this.deps.api.getCluster(id, { signal });
    if (cluster === undefined) return undefined;
    const disposition = await this.deps.handleEvent(adminEvent(id, cluster.generation), signal);
    const after = await this.deps.api.getCluster(id, { signal });
    if (after === undefined) return { id, generation: cluster.generation, result: 'gone' };
    const summary = rowSummary(
      toStatusRow(after, await findAdapterStatus(this.deps.api, id, ADAPTER_NAME, signal)),
    );
    return {
      id,
      generation: after.generation,
      result: disposition === 'retry' ? 'retrying' : 'done',
      state: summary.state,
      explanation: summary.explanation,
      report: summary.report,
    };
  }

  /** True when this server offers rollbacks. */
  get offersRollback(): boolean {
    return this.deps.rollback !== undefined;
  }

  /**
   * Rolls the cluster's pull secret back (docs/retention.md, "Rollback") in its scheduler slot;
   * undefined when the cluster does not exist.
   * @throws API_* from the HyperFleet API; CONFIG_INVALID (no store serves it); the rollback's errors
   *   (VERSION_DESTROYED, SECRET_NOT_FOUND, SECRET_UNMANAGED, VERSION_NOT_ENABLED, store, Kubernetes)
   */
  async rollback(id: string, ask: RollbackAsk, signal?: AbortSignal): Promise<RollbackView | undefined> {
    const run = this.deps.rollback;
    if (run === undefined) throw new PullSecretError('INTERNAL', 'rollback is not offered by this server');
    const cluster = await this.deps.api.getCluster(id, { signal });
    if (cluster === undefined) return undefined;
    const params = readClusterParams(cluster, this.deps.fieldPaths);
    const route = this.deps.routes.route(cluster, params.provider);
    if (route === undefined)
      throw new PullSecretError('CONFIG_INVALID', this.deps.routes.unmappedMessage(params.provider));
    const result = await run(
      { provider: route.provider, settings: route.settings },
      {
        clusterId: cluster.id,
        secretName: params.secretName,
        namespace: params.namespace,
        ...ask,
      },
    );
    const view: RollbackView = {
      id,
      secretPath: result.secretPath,
      fromVersion: result.fromVersion,
      restoredVersion: result.sourceVersion,
      outcome: result.push.outcome,
    };
    if (result.push.version !== undefined) view.version = result.push.version;
    if (result.pin !== undefined) view.pin = pinFacts(result.pin);
    if (result.kubernetes !== undefined)
      view.kubernetesSecret = {
        namespace: result.kubernetes.namespace,
        name: result.kubernetes.name,
        outcome: result.kubernetes.outcome,
      };
    // A reconcile follows: the pin adopts the digest of the pull secret reconciled from (the spec's,
    // or the account service's when that is the source) and the status shows the pin. Its failure
    // is the status's; the rollback has succeeded.
    view.reconcile = await this.reconcileQuietly(id, signal);
    return view;
  }

  /** True when this server can release rollback pins. */
  get offersRelease(): boolean {
    return this.deps.releasePin !== undefined;
  }

  /**
   * Ends the cluster's rollback pin and reconciles it, so the spec is served again; undefined
   * when the cluster does not exist. @throws API_*, and what the pin store throws
   */
  async release(id: string, by: string, signal?: AbortSignal): Promise<ReleaseView | undefined> {
    const run = this.deps.releasePin;
    if (run === undefined) throw new PullSecretError('INTERNAL', 'release is not offered by this server');
    const cluster = await this.deps.api.getCluster(id, { signal });
    if (cluster === undefined) return undefined;
    const released = await run(id, by);
    if (!released) return { id, released };
    return { id, released, reconcile: await this.reconcileQuietly(id, signal) };
  }

  /** A reconcile through the pipeline whose failure is reported in its status, not thrown. */
  private async reconcileQuietly(id: string, signal?: AbortSignal): Promise<string> {
    try {
      const view = await this.reconcile(id, signal);
      return view?.result ?? 'gone';
    } catch {
      return 'failed';
    }
  }
}

/**
 * The answer to a transfer check: names and reasons only; messages are PullSecretError messages (never a credential).
 */
function transferCheckView(id: string, run: Exclude<TransferRun, { kind: 'gone' }>): TransferCheckView {
  if (run.kind === 'superseded')
    return { id, result: 'superseded', message: 'an event of the cluster replaced the check; try again' };
  if (run.kind === 'skipped') return { id, result: 'skipped', message: run.message };
  if (run.kind === 'failed')
    return { id, result: 'failed', errorCode: run.error.code, message: run.error.message };
  const o = run.value.outcome;
  const { reason, label } = TRANSFER_REASONS[o.kind];
  const view: TransferCheckView = { id, result: 'checked', outcome: label, reason };
  if ('transferId' in o) view.transferId = o.transferId;
  if (o.kind === 'multiple') view.transferIds = o.transferIds;
  if (o.kind === 'updated')
    Object.assign(view, { appliedAt: o.appliedAt, replaced: o.replaced, added: o.added });
  if ('message' in o) view.message = o.message;
  return view;
}

/** The summary of a status row the list and the cluster view share. */
function rowSummary(row: ClusterStatusRow): {
  id: string;
  name: string;
  generation: number;
  state: ClusterFilter;
  explanation?: string;
  report?: ReportView;
} {
  const explanation = explainRow(row);
  return {
    id: row.id,
    name: row.name,
    generation: row.generation,
    state: clusterState(row),
    ...(explanation === undefined ? {} : { explanation }),
    ...(row.report === undefined ? {} : { report: row.report }),
  };
}

/** A structured-mode CloudEvent for `id` at `generation`: the same trigger the Sentinel sends. */
function adminEvent(id: string, generation: number): InboundMessage {
  const event = {
    specversion: '1.0',
    id: randomUUID(),
    source: ADMIN_EVENT_SOURCE,
    type: RECONCILE_EVENT_TYPE,
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: { id, kind: 'Cluster', href: `/api/hyperfleet/v1/clusters/${id}`, generation },
  };
  return {
    id: `admin-${event.id}`,
    body: Buffer.from(JSON.stringify(event)),
    attributes: {},
    deliveryAttempt: 1,
  };
}
