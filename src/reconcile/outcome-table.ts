import type { Disposition } from '../brokers/broker.js';
import type { PullSecretError } from '../errors/index.js';
import type { EventResult, JobResult } from '../observability/metrics.js';
import type { WorkOutcome } from './outcome.js';
import type { ClusterRun } from './pipeline-plugin.js';

/**
 * Everything one unit of work can end in: the outcome of the work on a cluster (`WorkOutcome`),
 * or why no work was done. Events, drift repairs, Job completions, transfer checks and entitlement
 * refreshes all end in one of these.
 */
export type Outcome =
  | WorkOutcome
  /** Another resource's event on the same topic (a node pool): not ours. */
  | { kind: 'ignored' }
  /** An event that cannot be decoded, or names an unusable cluster id. */
  | { kind: 'invalid' }
  /** A newer generation's work replaced this one: it reads the cluster again and reports. */
  | { kind: 'superseded' }
  /** The cluster no longer exists. */
  | { kind: 'gone' }
  /** The broker's signal stopped the work (drain time over): the broker delivers it again. */
  | { kind: 'stopped' }
  /** The cluster could not be read, or the work threw. */
  | { kind: 'unread'; error: PullSecretError };

/** What to do about an outcome: the broker's disposition, the metric labels, whether status is reported. */
interface Decision {
  disposition: Disposition;
  /** `pullsecret_events_total{result}`; none when the work was stopped. */
  event?: EventResult;
  /** True when the outcome is reported to the HyperFleet API (then an undelivered report retries). */
  report: boolean;
}

/**
 * The one table from outcome to disposition, metric and report (as controller-runtime's
 * `reconcileHandler` decides requeue in one switch): malformed → reject (dead-letter); gone,
 * ignored, superseded → ack without a report; stopped → retry without a report; unread → retry
 * when retryable; work done, skipped or failed for good → report, ack; a transient failure or an
 * unconfirmed cleanup (`Finalized=False`) → report, then retry until it is confirmed.
 */
export function decide(outcome: Outcome): Decision {
  switch (outcome.kind) {
    case 'ignored':
    case 'superseded':
    case 'gone':
      return { disposition: 'ack', event: outcome.kind, report: false };
    case 'invalid':
      return { disposition: 'reject', event: 'invalid', report: false };
    case 'stopped':
      return { disposition: 'retry', report: false };
    case 'unread':
      return { disposition: outcome.error.retryable ? 'retry' : 'ack', event: 'failed', report: false };
    case 'applied':
    case 'job-running':
    case 'job-succeeded':
      return { disposition: 'ack', event: 'applied', report: true };
    case 'skipped':
      return { disposition: 'ack', event: 'skipped', report: true };
    case 'job-failed':
      return { disposition: 'ack', event: 'failed', report: true };
    case 'failed':
      return { disposition: outcome.error.retryable ? 'retry' : 'ack', event: 'failed', report: true };
    case 'finalized':
      return { disposition: 'ack', event: 'finalized', report: true };
    case 'finalize-failed':
      return { disposition: 'retry', event: 'failed', report: true };
  }
}

/**
 * The outcome of a task run for one cluster (`EventPipeline.runForCluster`: a transfer check, an
 * entitlement refresh) that ended before its work, for `decide`: the cluster gone, a newer event
 * superseding it, the cluster unread (then retried when the error is retryable, as an event is), or
 * skipped (unroutable, preconditions, no pull secret: the events of the cluster report that).
 */
export function runOutcome(run: Exclude<ClusterRun<unknown>, { kind: 'done' }>): Outcome {
  switch (run.kind) {
    case 'gone':
    case 'superseded':
      return { kind: run.kind };
    case 'failed':
      return { kind: 'unread', error: run.error };
    case 'skipped':
      return { kind: 'skipped', precondition: 'task', message: run.message };
  }
}

/**
 * `pullsecret_job_total{result}` of an executed or skipped reconcile; none while a Job still runs
 * (it is counted when a later event sees it finish) and for a deletion.
 */
export function jobResultOf(outcome: WorkOutcome): JobResult | undefined {
  switch (outcome.kind) {
    case 'skipped':
      return 'skipped';
    case 'failed':
    case 'job-failed':
      return 'failure';
    case 'applied':
    case 'job-succeeded':
      return 'success';
    default:
      return undefined;
  }
}
