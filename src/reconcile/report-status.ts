import { describeError, toPullSecretError } from '../errors/index.js';
import type { Cluster, HyperFleetClient } from '../hyperfleet/index.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { WorkOutcome } from './outcome.js';
import type { PipelinePlugin, StatusAddition } from './pipeline-plugin.js';
import { buildStatusReport } from './status-report.js';

/** What the plug-ins add to a report: the first health problem, every data field. */
function additions(
  plugins: readonly PipelinePlugin[],
  clusterId: string,
  outcome: WorkOutcome,
): StatusAddition {
  const addition: StatusAddition = {};
  for (const plugin of plugins) {
    const added = plugin.statusOf?.(clusterId, outcome);
    if (added?.healthProblem !== undefined) addition.healthProblem ??= added.healthProblem;
    if (added?.data !== undefined) addition.data = { ...addition.data, ...added.data };
  }
  return addition;
}

/**
 * Sends one outcome's status report (`buildStatusReport` with the plug-ins' additions) and counts
 * it. Resolves false when it could not be delivered and may be later (then the work is retried);
 * a report the API refuses for good counts as delivered. Never throws.
 */
export async function reportStatus(
  deps: { api: HyperFleetClient; metrics: Metrics },
  plugins: readonly PipelinePlugin[],
  at: { cluster: Cluster; outcome: WorkOutcome; log: Logger; signal: AbortSignal },
): Promise<boolean> {
  const { cluster, outcome, log, signal } = at;
  const report = buildStatusReport(
    outcome,
    cluster.generation,
    new Date(),
    additions(plugins, cluster.id, outcome),
  );
  try {
    const result = await deps.api.putStatus(cluster.id, report, { signal });
    deps.metrics.statusReports.inc({ result });
    log.info(
      { operation: 'report-status', result, observed_generation: cluster.generation },
      'Status reported',
    );
    return true;
  } catch (err) {
    deps.metrics.statusReports.inc({ result: 'error' });
    log.warn({ operation: 'report-status', ...describeError(err) }, 'Could not report status');
    return !toPullSecretError(err).retryable;
  }
}
