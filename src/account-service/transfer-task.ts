import { describeError, toPullSecretError } from '../errors/index.js';
import type { ClusterRun, ClusterTaskInput } from '../reconcile/pipeline-plugin.js';
import { supersededBy, type EventPipeline } from '../reconcile/pipeline.js';
import type { ClusterTransferResult } from './apply-transfer.js';
import type { TransferOutcome } from './transfer-check.js';
import type { TransferHealth, TransferProblem } from './transfer-health.js';

/** One cluster's current inputs for a transfer check. */
export type TransferCheckInput = ClusterTaskInput;

/** A transfer check the account service answered: its outcome, and when to check again after a 5xx. */
interface TransferChecked {
  outcome: TransferOutcome;
  retryInMs?: number;
}

/** What `checkTransferThrough` did; `done` only when the account service was asked. */
export type TransferRun = ClusterRun<TransferChecked>;

/** What a transfer check run needs besides the check: the health every report reads, the metric. */
interface TransferTaskDeps {
  health: TransferHealth;
  /** Counts one check's outcome (`pullsecret_transfer_checks_total`). */
  onOutcome?: (outcome: TransferOutcome) => void;
  /**
   * The cluster's transfer problem as last reported (its `Health`), read before the first check this
   * replica notes for it (`TransferHealth.restore`). @throws like the HyperFleet API client
   */
  reported?: (clusterId: string, signal: AbortSignal) => Promise<TransferProblem | undefined>;
}

/**
 * One ownership transfer check of a cluster (`check`, e.g. `checkAndApplyClusterTransfer`) run by
 * `runForCluster`: in the same scheduler slot as its events, so it never runs alongside one, with
 * the cluster, its target, preconditions and pull secret resolved as an event would. A status
 * report is sent when the check applied a transfer (from the reconcile it ran) or the cluster's
 * transfer health changed (from a fresh reconcile, so `Applied` and `Available` stay true to the
 * store). A newer event replacing the check ends it as `superseded`. Never throws.
 */
export async function checkTransferThrough(
  pipeline: EventPipeline,
  clusterId: string,
  check: (input: TransferCheckInput) => Promise<ClusterTransferResult>,
  deps: TransferTaskDeps,
): Promise<TransferRun> {
  try {
    const run = await pipeline.runForCluster(clusterId, 'transfer-check', (input) =>
      transferTask(pipeline, input, check, deps),
    );
    return run.kind === 'done' ? run.value : run;
  } catch (err) {
    return { kind: 'failed', error: toPullSecretError(err) };
  }
}

/** One transfer check of a resolved cluster, and the report it calls for. */
async function transferTask(
  pipeline: EventPipeline,
  input: TransferCheckInput,
  check: (input: TransferCheckInput) => Promise<ClusterTransferResult>,
  deps: TransferTaskDeps,
): Promise<TransferRun> {
  const { cluster, log, signal } = input;
  let result: ClusterTransferResult;
  try {
    result = await check(input);
  } catch (err) {
    if (supersededBy(signal)) return { kind: 'superseded' };
    const error = toPullSecretError(err);
    log.warn({ ...describeError(error) }, 'Transfer check could not read the current pull secret');
    return { kind: 'failed', error };
  }
  deps.onOutcome?.(result.outcome);
  await restoreHealth(cluster.id, deps, input);
  const note = deps.health.note(cluster.id, result.outcome);
  if (signal.aborted)
    return supersededBy(signal)
      ? { kind: 'superseded' }
      : { kind: 'done', value: { outcome: result.outcome } };
  if (result.reconcile !== undefined) await pipeline.reportApplied(input, result.reconcile);
  else if (note.report) await pipeline.reportFresh(input);
  return {
    kind: 'done',
    value: {
      outcome: result.outcome,
      ...(note.retryInMs === undefined ? {} : { retryInMs: note.retryInMs }),
    },
  };
}

/** Derives the cluster's transfer health from its reported status once; a failed read is tried at the next check. */
async function restoreHealth(
  clusterId: string,
  deps: TransferTaskDeps,
  input: TransferCheckInput,
): Promise<void> {
  if (deps.reported === undefined || !deps.health.needsRestore(clusterId)) return;
  try {
    deps.health.restore(clusterId, await deps.reported(clusterId, input.signal));
  } catch (err) {
    input.log.debug(
      { ...describeError(err) },
      'Could not read the reported status; derived at the next check',
    );
  }
}
