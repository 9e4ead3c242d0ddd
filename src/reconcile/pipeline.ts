import type { Disposition, InboundMessage } from '../brokers/broker.js';
import { describeError, toPullSecretError } from '../errors/index.js';
import { decodeEvent, type ClusterEvent } from '../events/cluster-event.js';
import type { Cluster, HyperFleetClient } from '../hyperfleet/index.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { assertClusterId } from '../pullsecret/identifiers.js';
import type { ClusterScheduler } from './cluster-scheduler.js';
import { SUPERSEDED } from './cluster-scheduler.js';
import type { Executor } from './executor.js';
import type { WorkOutcome } from './outcome.js';
import { decide, jobResultOf, type Outcome } from './outcome-table.js';
import type { ClusterRun, ClusterTaskInput, PipelinePlugin } from './pipeline-plugin.js';
import { UNMAPPED_PROVIDER } from './provider-routes.js';
import {
  checkPreconditions,
  readPullSecret,
  resolveCluster,
  type ResolveDeps,
  type ResolvedCluster,
} from './resolve-cluster.js';
import { reportStatus } from './report-status.js';
import type { ReconcileResult } from './reconcile-pull-secret.js';

interface PipelineDeps extends ResolveDeps {
  api: HyperFleetClient;
  executor: Executor;
  scheduler: ClusterScheduler<Disposition>;
  metrics: Metrics;
  logger: Logger;
  /** The features' hooks, in order (transfer fleet and health, entitlement refresher and expiry). */
  plugins?: readonly PipelinePlugin[];
}

/**
 * The adapter's event pipeline: decode the CloudEvent, GET the cluster (the event is only a
 * trigger), resolve it once (`resolveCluster`), check preconditions, execute, and report status on
 * every event; then tell the broker what to do with the message, as the outcome table (`decide`)
 * says. A report the API discards (204, e.g. a repeated `Available=Unknown`) counts as delivered.
 *
 * The broker's per-message signal, joined with the scheduler's, reaches every API, store and
 * Kubernetes call of the event.
 */
export class EventPipeline {
  private readonly plugins: readonly PipelinePlugin[];

  constructor(private readonly deps: PipelineDeps) {
    this.plugins = deps.plugins ?? [];
  }

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
        return this.settle({ kind: 'ignored' });
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
      return this.settle({ kind: 'invalid' });
    }
    metrics.inFlight.inc();
    try {
      const settled = await this.deps.scheduler.submit(
        event.clusterId,
        event.generation ?? 0,
        (taskSignal) => this.process(event, taskSignal),
        signal,
      );
      return settled === SUPERSEDED ? this.settle({ kind: 'superseded' }) : settled;
    } catch (err) {
      logger.error(
        { operation: 'process-event', cluster_id: event.clusterId, ...describeError(err) },
        'Event processing failed',
      );
      return this.settle({ kind: 'unread', error: toPullSecretError(err) }, 'retry');
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
   * Runs `task` for one cluster through its scheduler slot, with the cluster resolved as an event
   * would (GET, store route, target, preconditions, current pull secret): the entitlement refresh
   * and the transfer check. When `reportAfter(value)` is true, a fresh reconcile's status is
   * reported (so new status data shows without waiting for an event; `Applied` and `Available`
   * stay true to the store). A newer event replacing it ends it as `superseded`. Throws only what
   * `task` throws.
   */
  async runForCluster<T>(
    clusterId: string,
    operation: string,
    task: (input: ClusterTaskInput) => Promise<T>,
    reportAfter?: (value: T) => boolean,
  ): Promise<ClusterRun<T>> {
    let run: ClusterRun<T> = { kind: 'superseded' };
    const settled = await this.deps.scheduler.submit(clusterId, 0, async (signal) => {
      // `trigger`, not `operation`: the steps' own lines name their operation (e.g. execute), once per line.
      const log = this.deps.logger.child({ cluster_id: clusterId, trigger: operation });
      const resolved = await this.taskInput(clusterId, log, signal);
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

  /** Reports a reconcile a task ran itself (a transfer check that applied a transfer). */
  async reportApplied(input: ClusterTaskInput, result: ReconcileResult): Promise<void> {
    const applied = { kind: 'applied', target: input.target, result } as const;
    this.noteWritten(input.cluster.id, applied);
    await this.report(input.cluster, applied, input.log, input.signal);
  }

  /** Reports the status of a fresh reconcile (so `Applied` and `Available` stay true to the store). */
  async reportFresh(input: ClusterTaskInput): Promise<void> {
    const { cluster, log, signal } = input;
    await this.report(
      cluster,
      await this.execute(input.resolved, input.pullSecret, log, signal),
      log,
      signal,
    );
  }

  /**
   * One cluster's current inputs (GET, route, target, preconditions, pull secret) as an event reads them. Never
   * throws.
   */
  private async taskInput(
    clusterId: string,
    log: Logger,
    signal: AbortSignal,
  ): Promise<ClusterRun<ClusterTaskInput>> {
    let cluster: Cluster | undefined;
    try {
      cluster = await this.deps.api.getCluster(clusterId, { signal });
    } catch (err) {
      if (supersededBy(signal)) return { kind: 'superseded' };
      return { kind: 'failed', error: toPullSecretError(err) };
    }
    if (cluster === undefined || cluster.deleted_time !== undefined) return { kind: 'gone' };
    const resolution = resolveCluster(cluster, this.deps);
    if (resolution.kind === 'unroutable') return { kind: 'skipped', message: resolution.message };
    if (resolution.kind === 'names-invalid') return { kind: 'skipped', message: resolution.error.message };
    const { resolved } = resolution;
    try {
      const verdict = checkPreconditions(resolved, this.deps);
      if (!verdict.met) return { kind: 'skipped', message: verdict.message };
    } catch (err) {
      return { kind: 'skipped', message: toPullSecretError(err).message };
    }
    const pullSecret = await readPullSecret(resolved, this.deps, log, signal);
    if (typeof pullSecret !== 'string') return { kind: 'skipped', message: pullSecret.message };
    const value = {
      cluster,
      target: resolved.target,
      names: resolved.names,
      resolved,
      pullSecret,
      log,
      signal,
    };
    return { kind: 'done', value };
  }

  /** A new pull secret version was written: the plug-ins hear of it (never blocks). */
  private noteWritten(clusterId: string, outcome: WorkOutcome): void {
    if (
      outcome.kind === 'applied' &&
      (outcome.result.outcome === 'created' || outcome.result.outcome === 'updated') &&
      !outcome.result.dryRun
    ) {
      for (const plugin of this.plugins) plugin.onPullSecretWritten?.(clusterId);
    }
  }

  /** Counts an outcome and returns its disposition (or `disposition`), as the outcome table says. */
  private settle(outcome: Outcome, disposition?: Disposition): Disposition {
    const decision = decide(outcome);
    if (decision.event !== undefined) this.deps.metrics.events.inc({ result: decision.event });
    return disposition ?? decision.disposition;
  }

  private async process(event: ClusterEvent, signal: AbortSignal): Promise<Disposition> {
    const log = this.deps.logger.child({ cluster_id: event.clusterId, event_id: event.eventId });
    let cluster: Cluster | undefined;
    try {
      cluster = await this.deps.api.getCluster(event.clusterId, { signal });
    } catch (err) {
      if (supersededBy(signal)) return this.superseded(log);
      const error = toPullSecretError(err);
      log.warn({ operation: 'get-cluster', ...describeError(error) }, 'Could not read the cluster');
      return this.settle({ kind: 'unread', error });
    }
    const exists = cluster !== undefined && cluster.deleted_time === undefined;
    for (const plugin of this.plugins) plugin.onClusterRead?.(event.clusterId, exists);
    if (cluster === undefined) {
      log.info({ operation: 'get-cluster' }, 'Cluster no longer exists; nothing to do');
      return this.settle({ kind: 'gone' });
    }
    const outcome = await this.work(cluster, log, signal);
    if (supersededBy(signal)) return this.superseded(log);
    if (signal.aborted) {
      // Stopped (drain time over): no report with a cut-short outcome; the broker delivers it again.
      log.info(
        { operation: 'process-event' },
        'Stopped before the work finished; the event will be delivered again',
      );
      return this.settle({ kind: 'stopped' });
    }
    const decision = decide(outcome);
    this.settle(outcome);
    const reported = await this.report(cluster, outcome, log, signal);
    // An undelivered report is retried like the work.
    const disposition = reported ? decision.disposition : 'retry';
    if (disposition !== 'retry') return disposition;
    // Superseded while reporting: the newer event does the work and reports; no need to retry this one.
    return supersededBy(signal) ? this.superseded(log) : 'retry';
  }

  /** A newer generation's event is waiting: it reads the cluster again and reports instead. */
  private superseded(log: Logger): Disposition {
    log.info({ operation: 'process-event' }, 'Superseded by a newer generation while running; not reporting');
    return this.settle({ kind: 'superseded' });
  }

  /** A skip the job metric counts (unroutable, preconditions), logged with `line`. */
  private skipped(
    outcome: Extract<WorkOutcome, { kind: 'skipped' }>,
    log: Logger,
    line: string,
  ): WorkOutcome {
    log.info({ operation: 'preconditions', precondition: outcome.precondition }, line);
    this.countJob(outcome);
    return outcome;
  }

  private countJob(outcome: WorkOutcome): void {
    const result = jobResultOf(outcome);
    if (result !== undefined) this.deps.metrics.jobTotal.inc({ result });
  }

  private async work(cluster: Cluster, log: Logger, signal: AbortSignal): Promise<WorkOutcome> {
    const deleted = cluster.deleted_time !== undefined;
    const resolution = resolveCluster(cluster, this.deps);
    // No store serves this provider, or no usable name: nothing was ever written, so a deletion is done.
    if (resolution.kind !== 'resolved' && deleted)
      return { kind: 'finalized', kubernetesRemoved: false, cloud: 'absent' };
    if (resolution.kind === 'unroutable')
      return this.skipped(
        { kind: 'skipped', precondition: UNMAPPED_PROVIDER, message: resolution.message },
        log,
        'No store serves the cluster provider; skipping',
      );
    // Every name checked once, before any store or Kubernetes call (a failed status, 0 writes).
    if (resolution.kind === 'names-invalid') return { kind: 'failed', error: resolution.error };
    const { resolved } = resolution;
    const { target, names } = resolved;
    if (deleted) {
      const outcome = await this.deps.executor.finalize(
        { clusterId: cluster.id, generation: cluster.generation, target, names, log },
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
      const verdict = checkPreconditions(resolved, this.deps);
      if (!verdict.met)
        return this.skipped(
          { kind: 'skipped', precondition: verdict.name, message: verdict.message },
          log,
          'Preconditions not met; skipping',
        );
    } catch (err) {
      return { kind: 'failed', error: toPullSecretError(err), target };
    }
    const pullSecret = await readPullSecret(resolved, this.deps, log, signal);
    if (typeof pullSecret !== 'string') return { kind: 'failed', error: pullSecret, target };
    return await this.execute(resolved, pullSecret, log, signal);
  }

  private async execute(
    resolved: ResolvedCluster,
    pullSecret: string,
    log: Logger,
    signal: AbortSignal,
  ): Promise<WorkOutcome> {
    const { metrics } = this.deps;
    const { cluster, target, names } = resolved;
    const started = performance.now();
    const outcome = await this.deps.executor.execute(
      { clusterId: cluster.id, generation: cluster.generation, target, names, pullSecret, log },
      signal,
    );
    metrics.jobDuration.observe((performance.now() - started) / 1000);
    this.countJob(outcome);
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
    return await reportStatus(this.deps, this.plugins, { cluster, outcome, log, signal });
  }
}

/** True when a newer generation's work replaced this one (the scheduler's abort reason). */
export function supersededBy(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason === SUPERSEDED;
}
