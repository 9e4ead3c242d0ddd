import type { Disposition, InboundMessage } from '../brokers/broker.js';
import { describeError, PullSecretError, toPullSecretError } from '../errors/index.js';
import { decodeEvent, type ClusterEvent } from '../events/cluster-event.js';
import type { Cluster, HyperFleetClient } from '../hyperfleet/index.js';
import type { Logger } from '../observability/logger.js';
import type { EventResult, Metrics } from '../observability/metrics.js';
import { deriveClusterNames, type ClusterNames } from '../pullsecret/cluster-names.js';
import { assertClusterId } from '../pullsecret/identifiers.js';
import type { ClusterTransferResult } from '../account-service/apply-transfer.js';
import type { TransferOutcome } from '../account-service/transfer-check.js';
import { readClusterParams, type ClusterParams, type FieldPaths } from './cluster-params.js';
import type { ClusterScheduler } from './cluster-scheduler.js';
import { SUPERSEDED } from './cluster-scheduler.js';
import type { Executor } from './executor.js';
import type { WorkOutcome, WorkTarget } from './outcome.js';
import { UNMAPPED_PROVIDER, type ClusterRoute, type ProviderRoutes } from './provider-routes.js';
import { buildStatusReport } from './status-report.js';
import type { TransferHealth } from '../account-service/transfer-health.js';

export interface PipelineDeps {
  api: HyperFleetClient;
  executor: Executor;
  /** Which store serves each cluster, and the preconditions of its provider. */
  routes: ProviderRoutes;
  fieldPaths: FieldPaths;
  scheduler: ClusterScheduler<Disposition>;
  metrics: Metrics;
  logger: Logger;
  /** True when a Kubernetes Secret is written (its namespace and name are then checked up front). */
  writesKubernetes: boolean;
  /** Ownership transfer checks (set when `accountService` is configured): their health shows in every report. */
  transfers?: PipelineTransfers;
  /** `pullSecretSource: account-service`: reads the cluster's pull secret instead of the spec's. */
  pullSecretSource?: PullSecretSource;
  /** Entitlement certificates (`entitlements.enabled`): new pull secret versions, expiry in reports. */
  entitlements?: PipelineEntitlements;
  /** Told of every cluster an event read, in order (the transfer fleet, the entitlement refresher). */
  clusterObservers?: readonly ClusterObserver[];
}

/** Hears of every cluster an event read: `exists` false when it is gone or being deleted. Must not block. */
export type ClusterObserver = (clusterId: string, exists: boolean) => void;

/** What the pipeline needs of the entitlement refresher (docs/account-service.md). */
export interface PipelineEntitlements {
  /** A reconcile wrote a new pull secret version (created/updated); must not block (it runs in the cluster's slot). */
  onPullSecretWritten(clusterId: string): void;
  /** The cluster's certificate expiry (RFC 3339) for status `data.entitlementExpiresAt`, when known. */
  expiresAt(clusterId: string): string | undefined;
}

/**
 * What a task of one cluster did (`EventPipeline.runForCluster`, `checkTransfer`): `done` with its
 * value, or why it did not run (or did not finish): the cluster gone or being deleted, skipped
 * (unroutable, preconditions, no pull secret), superseded by a newer event, or failed.
 */
export type ClusterRun<T> =
  | { kind: 'done'; value: T }
  | { kind: 'gone' }
  | { kind: 'skipped'; message: string }
  | { kind: 'superseded' }
  | { kind: 'failed'; error: PullSecretError };

/** Where the pipeline reads a cluster's pull secret when it is not the spec's (`pullSecretSource: account-service`). */
export interface PullSecretSource {
  /** True when the source can serve the cluster: `params.hasPullSecret` of the preconditions. */
  has(cluster: Cluster): boolean;
  /** The pull secret text (a credential). @throws PullSecretError */
  read(cluster: Cluster, signal: AbortSignal): Promise<string>;
}

/** What the pipeline needs of the transfer checks. */
export interface PipelineTransfers {
  health: TransferHealth;
  /** Counts one check's outcome (`pullsecret_transfer_checks_total`). */
  onOutcome?: (outcome: TransferOutcome) => void;
}

/** One cluster's current inputs for a transfer check. */
export interface TransferCheckInput {
  cluster: Cluster;
  target: WorkTarget;
  /** The cluster's pull secret text from its source (a credential). */
  pullSecret: string;
  log: Logger;
  signal: AbortSignal;
}

/** A transfer check the account service answered: its outcome, and when to check again after a 5xx. */
export interface TransferChecked {
  outcome: TransferOutcome;
  retryInMs?: number;
}

/** What `EventPipeline.checkTransfer` did; `done` only when the account service was asked. */
export type TransferRun = ClusterRun<TransferChecked>;

/** The event result for the metrics, by outcome. */
const RESULT_OF: Record<WorkOutcome['kind'], EventResult> = {
  applied: 'applied',
  skipped: 'skipped',
  failed: 'failed',
  'job-running': 'applied',
  'job-succeeded': 'applied',
  'job-failed': 'failed',
  finalized: 'finalized',
  'finalize-failed': 'failed',
};

/**
 * The adapter's event pipeline (seed 001 phases 1-6): decode the CloudEvent, GET the cluster (the
 * event is only a trigger), check preconditions, execute, and report status on every event; then
 * tell the broker what to do with the message.
 *
 * Dispositions: malformed event → reject (dead-letter); cluster gone → ack; work done, skipped or
 * failed for good → ack; transient failure (API or store unavailable) → report, then retry; cleanup
 * of a deleted cluster not confirmed (`Finalized=False`, whatever the cause) → report, then retry
 * until it is; superseded by a newer generation while running → ack without a report; stopped by the
 * broker's signal (drain time over) → retry without a report. A report the
 * API discards (204, e.g. a repeated `Available=Unknown`) counts as delivered.
 *
 * The broker's per-message signal, joined with the scheduler's, reaches every API, store and
 * Kubernetes call of the event.
 */
export class EventPipeline {
  constructor(private readonly deps: PipelineDeps) {}

  /** The broker's message handler. Never throws. */
  readonly handle = async (message: InboundMessage, signal?: AbortSignal): Promise<Disposition> => {
    const started = performance.now();
    const { metrics, logger } = this.deps;
    let event: ClusterEvent;
    try {
      const decoded = decodeEvent(message.body);
      if ('other' in decoded) {
        // A node pool's (or another resource's) event on the same topic: not ours to reconcile.
        logger.info(
          {
            operation: 'decode-event',
            message_id: message.id,
            event_id: decoded.other.eventId,
            event_kind: decoded.other.kind,
          },
          'Ignored an event about another kind of resource',
        );
        metrics.events.inc({ result: 'ignored' });
        return 'ack';
      }
      event = decoded.cluster;
      assertClusterId(event.clusterId);
    } catch (err) {
      logger.warn(
        {
          operation: 'decode-event',
          message_id: message.id,
          delivery_attempt: message.deliveryAttempt,
          ...describeError(err),
        },
        'Rejected an invalid event',
      );
      metrics.events.inc({ result: 'invalid' });
      return 'reject';
    }
    metrics.inFlight.inc();
    try {
      const settled = await this.deps.scheduler.submit(
        event.clusterId,
        event.generation ?? 0,
        (taskSignal) => this.process(event, taskSignal),
        signal,
      );
      if (settled === SUPERSEDED) {
        metrics.events.inc({ result: 'superseded' });
        return 'ack';
      }
      return settled;
    } catch (err) {
      logger.error(
        { operation: 'process-event', cluster_id: event.clusterId, ...describeError(err) },
        'Event processing failed',
      );
      metrics.events.inc({ result: 'failed' });
      return 'retry';
    } finally {
      metrics.inFlight.dec();
      metrics.eventDuration.observe((performance.now() - started) / 1000);
    }
  };

  /**
   * Reconciles a cluster without a broker event (a drift repair, a finished Job): the same
   * scheduler (never alongside another task of the cluster), steps and report as an event of
   * `generation`. `still` is asked when the task starts (after the cluster's earlier work): false
   * skips it. Resolves with the disposition, or SUPERSEDED; never throws.
   */
  async reconcile(
    clusterId: string,
    generation: number,
    origin: 'drift-repair' | 'job-finished' | 'store-notification',
    still: () => boolean = () => true,
  ): Promise<Disposition | typeof SUPERSEDED> {
    const event: ClusterEvent = {
      eventId: `${origin}-${Date.now()}`,
      type: 'com.redhat.hyperfleet.cluster.reconcile',
      source: origin,
      clusterId,
      generation,
    };
    try {
      return await this.deps.scheduler.submit(clusterId, generation, (signal) =>
        still() ? this.process(event, signal) : Promise.resolve<Disposition>('ack'),
      );
    } catch (err) {
      this.deps.logger.error(
        { operation: origin, cluster_id: clusterId, ...describeError(err) },
        'Event processing failed',
      );
      return 'retry';
    }
  }

  /**
   * One ownership transfer check of a cluster (`check`, e.g. `checkAndApplyClusterTransfer`) run by
   * `runForCluster`: in the same scheduler slot as its events, so it never runs alongside one, with
   * the cluster, its target, preconditions and pull secret resolved as an event would. A status report is sent when
   * the check applied a transfer (from the reconcile it ran) or the cluster's transfer health
   * changed (from a fresh reconcile, so `Applied` and `Available` stay true to the store). A newer
   * event replacing the check ends it as `superseded`. Never throws.
   */
  async checkTransfer(
    clusterId: string,
    check: (input: TransferCheckInput) => Promise<ClusterTransferResult>,
  ): Promise<TransferRun> {
    try {
      const run = await this.runForCluster(clusterId, 'transfer-check', (input) =>
        this.transferTask(input, check),
      );
      return run.kind === 'done' ? run.value : run;
    } catch (err) {
      return { kind: 'failed', error: toPullSecretError(err) };
    }
  }

  /**
   * Runs `task` for one cluster through its scheduler slot, with the cluster resolved as an event
   * would (GET, store route, target, preconditions, current pull secret): the entitlement refresh
   * and the transfer check.
   * When `reportAfter(value)` is true, a fresh reconcile's status is reported (so new status data
   * shows without waiting for an event; `Applied` and `Available` stay true to the store).
   * A newer event replacing it ends it as `superseded`. Throws only what `task` throws.
   */
  async runForCluster<T>(
    clusterId: string,
    operation: string,
    task: (input: TransferCheckInput) => Promise<T>,
    reportAfter?: (value: T) => boolean,
  ): Promise<ClusterRun<T>> {
    let run: ClusterRun<T> = { kind: 'superseded' };
    const settled = await this.deps.scheduler.submit(clusterId, 0, async (signal) => {
      // `trigger`, not `operation`: the steps' own lines name their operation (e.g. execute), once per line.
      const log = this.deps.logger.child({ cluster_id: clusterId, trigger: operation });
      const resolved = await this.resolve(clusterId, log, signal);
      if (resolved.kind !== 'done') {
        run = resolved;
        return 'ack';
      }
      const value = await task(resolved.value);
      run = { kind: 'done', value };
      if (reportAfter?.(value) === true && !signal.aborted) await this.reportFresh(resolved.value);
      return 'ack';
    });
    return settled === SUPERSEDED ? { kind: 'superseded' } : run;
  }

  /** One transfer check of a resolved cluster (`checkTransfer`), and the report it calls for. */
  private async transferTask(
    input: TransferCheckInput,
    check: (input: TransferCheckInput) => Promise<ClusterTransferResult>,
  ): Promise<TransferRun> {
    const transfers = this.deps.transfers;
    const { cluster, target, log, signal } = input;
    let result: ClusterTransferResult;
    try {
      result = await check(input);
    } catch (err) {
      if (supersededBy(signal)) return { kind: 'superseded' };
      const error = toPullSecretError(err);
      log.warn({ ...describeError(error) }, 'Transfer check could not read the current pull secret');
      return { kind: 'failed', error };
    }
    transfers?.onOutcome?.(result.outcome);
    const note = transfers?.health.note(cluster.id, result.outcome) ?? { healthChanged: false };
    if (signal.aborted)
      return supersededBy(signal)
        ? { kind: 'superseded' }
        : { kind: 'done', value: { outcome: result.outcome } };
    if (result.reconcile !== undefined) {
      const applied = { kind: 'applied', target, result: result.reconcile } as const;
      this.noteWritten(cluster.id, applied);
      await this.report(cluster, applied, log, signal);
    } else if (note.healthChanged) {
      await this.reportFresh(input);
    }
    return {
      kind: 'done',
      value: {
        outcome: result.outcome,
        ...(note.retryInMs === undefined ? {} : { retryInMs: note.retryInMs }),
      },
    };
  }

  /** Reports the status of a fresh reconcile (so `Applied` and `Available` stay true to the store). */
  private async reportFresh({ cluster, target, pullSecret, log, signal }: TransferCheckInput): Promise<void> {
    await this.report(cluster, await this.execute(cluster, target, pullSecret, log, signal), log, signal);
  }

  /** One cluster's current inputs (GET, route, target, preconditions, pull secret) as an event reads them. Never throws. */
  private async resolve(
    clusterId: string,
    log: Logger,
    signal: AbortSignal,
  ): Promise<ClusterRun<TransferCheckInput>> {
    let cluster: Cluster | undefined;
    try {
      cluster = await this.deps.api.getCluster(clusterId, { signal });
    } catch (err) {
      if (supersededBy(signal)) return { kind: 'superseded' };
      return { kind: 'failed', error: toPullSecretError(err) };
    }
    if (cluster === undefined || cluster.deleted_time !== undefined) return { kind: 'gone' };
    const params = readClusterParams(cluster, this.deps.fieldPaths);
    const route = this.deps.routes.route(cluster, params.provider);
    if (route === undefined)
      return { kind: 'skipped', message: this.deps.routes.unmappedMessage(params.provider) };
    let target: WorkTarget;
    try {
      const names = deriveClusterNames({
        clusterId: cluster.id,
        secretName: params.secretName,
        namespace: params.namespace,
        kubernetes: this.deps.writesKubernetes,
      });
      target = targetOf(route, names);
      const verdict = this.deps.routes.evaluate(route, cluster, this.forPreconditions(cluster, params));
      if (!verdict.met) return { kind: 'skipped', message: verdict.message };
    } catch (err) {
      return { kind: 'skipped', message: toPullSecretError(err).message };
    }
    const pullSecret = await this.pullSecretOf(cluster, params, log, signal);
    if (typeof pullSecret !== 'string') return { kind: 'skipped', message: pullSecret.message };
    return { kind: 'done', value: { cluster, target, pullSecret, log, signal } };
  }

  /** A new pull secret version was written: the entitlement refresher hears of it (never blocks). */
  private noteWritten(clusterId: string, outcome: WorkOutcome): void {
    if (
      outcome.kind === 'applied' &&
      (outcome.result.outcome === 'created' || outcome.result.outcome === 'updated') &&
      !outcome.result.dryRun
    ) {
      this.deps.entitlements?.onPullSecretWritten(clusterId);
    }
  }

  private async process(event: ClusterEvent, signal: AbortSignal): Promise<Disposition> {
    const { api, metrics } = this.deps;
    const log = this.deps.logger.child({ cluster_id: event.clusterId, event_id: event.eventId });
    let cluster: Cluster | undefined;
    try {
      cluster = await api.getCluster(event.clusterId, { signal });
    } catch (err) {
      if (supersededBy(signal)) return this.superseded(log);
      const error = toPullSecretError(err);
      log.warn({ operation: 'get-cluster', ...describeError(error) }, 'Could not read the cluster');
      metrics.events.inc({ result: 'failed' });
      return error.retryable ? 'retry' : 'ack';
    }
    const exists = cluster !== undefined && cluster.deleted_time === undefined;
    for (const observe of this.deps.clusterObservers ?? []) observe(event.clusterId, exists);
    if (cluster === undefined) {
      log.info({ operation: 'get-cluster' }, 'Cluster no longer exists; nothing to do');
      metrics.events.inc({ result: 'gone' });
      return 'ack';
    }
    const outcome = await this.work(cluster, log, signal);
    if (supersededBy(signal)) return this.superseded(log);
    if (signal.aborted) {
      // Stopped (drain time over): no report with a cut-short outcome; the broker delivers it again.
      log.info(
        { operation: 'process-event' },
        'Stopped before the work finished; the event will be delivered again',
      );
      return 'retry';
    }
    metrics.events.inc({ result: RESULT_OF[outcome.kind] });
    const reported = await this.report(cluster, outcome, log, signal);
    const again =
      outcome.kind === 'finalize-failed' || (outcome.kind === 'failed' && outcome.error.retryable);
    if (reported && !again) return 'ack';
    // Superseded while reporting: the newer event does the work and reports; no need to retry this one.
    return supersededBy(signal) ? this.superseded(log) : 'retry';
  }

  /** A newer generation's event is waiting: it reads the cluster again and reports instead. */
  private superseded(log: Logger): Disposition {
    log.info({ operation: 'process-event' }, 'Superseded by a newer generation while running; not reporting');
    this.deps.metrics.events.inc({ result: 'superseded' });
    return 'ack';
  }

  private async work(cluster: Cluster, log: Logger, signal: AbortSignal): Promise<WorkOutcome> {
    const { metrics } = this.deps;
    const params = readClusterParams(cluster, this.deps.fieldPaths);
    const route = this.deps.routes.route(cluster, params.provider);
    if (route === undefined) {
      // No store serves this provider: nothing was ever written for it, so a deletion is done.
      if (cluster.deleted_time !== undefined)
        return { kind: 'finalized', kubernetesRemoved: false, cloud: 'absent' };
      log.info(
        { operation: 'preconditions', precondition: UNMAPPED_PROVIDER },
        'No store serves the cluster provider; skipping',
      );
      metrics.jobTotal.inc({ result: 'skipped' });
      return {
        kind: 'skipped',
        precondition: UNMAPPED_PROVIDER,
        message: this.deps.routes.unmappedMessage(params.provider),
      };
    }
    // Every name checked once, before any store or Kubernetes call (a failed status, 0 writes).
    let names: ClusterNames;
    try {
      names = deriveClusterNames({
        clusterId: cluster.id,
        secretName: params.secretName,
        namespace: params.namespace,
        kubernetes: this.deps.writesKubernetes,
      });
    } catch (err) {
      if (cluster.deleted_time === undefined) return { kind: 'failed', error: toPullSecretError(err) };
      // A deleted cluster whose current spec names something unusable: an earlier generation may have
      // written under the default names, so clean up those (and every Job) rather than nothing.
      const fallback = defaultClusterNames(cluster.id, this.deps.writesKubernetes);
      if (fallback === undefined) return { kind: 'finalized', kubernetesRemoved: false, cloud: 'absent' };
      names = fallback;
    }
    const target = targetOf(route, names);
    if (cluster.deleted_time !== undefined) {
      const outcome = await this.deps.executor.finalize(
        { clusterId: cluster.id, generation: cluster.generation, target, log },
        signal,
      );
      if (outcome.kind === 'finalize-failed')
        log.warn(
          { operation: 'finalize', ...describeError(outcome.error) },
          'Cluster cleanup not confirmed; will retry',
        );
      else log.info({ operation: 'finalize', outcome: outcome.kind }, 'Cluster cleanup finished');
      return outcome;
    }
    try {
      const verdict = this.deps.routes.evaluate(route, cluster, this.forPreconditions(cluster, params));
      if (!verdict.met) {
        log.info(
          { operation: 'preconditions', precondition: verdict.name },
          'Preconditions not met; skipping',
        );
        metrics.jobTotal.inc({ result: 'skipped' });
        return { kind: 'skipped', precondition: verdict.name, message: verdict.message };
      }
    } catch (err) {
      return { kind: 'failed', error: toPullSecretError(err), target };
    }
    const pullSecret = await this.pullSecretOf(cluster, params, log, signal);
    if (typeof pullSecret !== 'string') return { kind: 'failed', error: pullSecret, target };
    return await this.execute(cluster, target, pullSecret, log, signal);
  }

  /**
   * The cluster's pull secret text: `spec.pullSecret.data` (the `pullSecret` field paths), or the
   * account service's for the cluster's organization (`pullSecretSource: account-service`).
   * @returns the error to report when there is none or the source failed (never throws)
   */
  private async pullSecretOf(
    cluster: Cluster,
    params: ClusterParams,
    log: Logger,
    signal: AbortSignal,
  ): Promise<string | PullSecretError> {
    const source = this.deps.pullSecretSource;
    if (source !== undefined) {
      try {
        return await source.read(cluster, signal);
      } catch (err) {
        const error = toPullSecretError(err);
        log.warn(
          { operation: 'pull-secret-source', ...describeError(error) },
          'Could not read the pull secret from the account service',
        );
        return error;
      }
    }
    if (params.pullSecret === undefined)
      return new PullSecretError(
        'PULL_SECRET_INVALID',
        'invalid pull secret format: the cluster has no pull secret data',
      );
    return params.pullSecret;
  }

  /** The params the preconditions see: with a source, `hasPullSecret` means the source can serve the cluster. */
  private forPreconditions(cluster: Cluster, params: ClusterParams): ClusterParams {
    const source = this.deps.pullSecretSource;
    if (source === undefined) return params;
    return { ...params, pullSecret: source.has(cluster) ? '(from the account service)' : undefined };
  }

  private async execute(
    cluster: Cluster,
    target: WorkTarget,
    pullSecret: string,
    log: Logger,
    signal: AbortSignal,
  ): Promise<WorkOutcome> {
    const { metrics } = this.deps;
    const started = performance.now();
    const outcome = await this.deps.executor.execute(
      { clusterId: cluster.id, generation: cluster.generation, target, pullSecret, log },
      signal,
    );
    metrics.jobDuration.observe((performance.now() - started) / 1000);
    // A Job still running has no result yet: it is counted when a later event sees it finish.
    if (outcome.kind !== 'job-running')
      metrics.jobTotal.inc({
        result: outcome.kind === 'failed' || outcome.kind === 'job-failed' ? 'failure' : 'success',
      });
    if (outcome.kind === 'applied' && outcome.result.kubernetes)
      metrics.kubernetesWrites.inc({ outcome: outcome.result.kubernetes.outcome });
    if (outcome.kind === 'failed')
      log.warn({ operation: 'execute', ...describeError(outcome.error) }, 'Pull secret reconcile failed');
    else
      log.info(
        { operation: 'execute', outcome: outcome.kind === 'applied' ? outcome.result.outcome : outcome.kind },
        'Pull secret reconciled',
      );
    this.noteWritten(cluster.id, outcome);
    return outcome;
  }

  /** Sends the status; false when it could not be delivered (then the event is retried). */
  private async report(
    cluster: Cluster,
    outcome: WorkOutcome,
    log: Logger,
    signal: AbortSignal,
  ): Promise<boolean> {
    const entitlementExpiresAt =
      outcome.kind === 'finalized' || outcome.kind === 'finalize-failed'
        ? undefined
        : this.deps.entitlements?.expiresAt(cluster.id);
    const report = buildStatusReport(
      outcome,
      cluster.generation,
      new Date(),
      this.deps.transfers?.health.problem(cluster.id),
      entitlementExpiresAt,
    );
    try {
      const result = await this.deps.api.putStatus(cluster.id, report, { signal });
      this.deps.metrics.statusReports.inc({ result });
      log.info(
        { operation: 'report-status', result, observed_generation: cluster.generation },
        'Status reported',
      );
      return true;
    } catch (err) {
      this.deps.metrics.statusReports.inc({ result: 'error' });
      log.warn({ operation: 'report-status', ...describeError(err) }, 'Could not report status');
      return !toPullSecretError(err).retryable;
    }
  }
}

function supersededBy(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason === SUPERSEDED;
}

/** Where a routed cluster's secrets go, under its checked names. */
function targetOf(route: ClusterRoute, names: ClusterNames): WorkTarget {
  return {
    store: route.store,
    provider: route.provider,
    settings: route.settings,
    secretName: names.secretId,
    namespace: names.namespace,
    kubernetesSecretName: names.kubernetesSecretName,
  };
}

/** The default names of a cluster (no spec overrides); `undefined` when even those cannot be used. */
function defaultClusterNames(clusterId: string, kubernetes: boolean): ClusterNames | undefined {
  try {
    return deriveClusterNames({ clusterId, kubernetes });
  } catch {
    return undefined;
  }
}
