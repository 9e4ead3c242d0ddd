import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { loadJobConfig, JOB_ENV } from '../job/config.js';
import { runPullSecretJob } from '../job/pull-secret-job.js';
import { writeResultFile } from '../job/result-file.js';
import { resultPathProblem } from '../job/path-checks.js';
import { failureReason, PullSecretError, toPullSecretError } from '../errors/index.js';
import { createLogger } from '../observability/logger.js';
import { onStrayError } from '../observability/process-guard.js';
import { storeEnv, STORE_KINDS } from '../stores/registry.js';
import { renderTable } from '../util/table.js';
import { reportFailure } from './output.js';

function environmentHelp(): string {
  const rows: Array<[string, string]> = Object.entries(JOB_ENV).map(([name, { help }]) => [name, help]);
  for (const kind of STORE_KINDS) {
    for (const [name, { help }] of Object.entries(storeEnv(kind))) rows.push([name, `[${kind}] ${help}`]);
  }
  return ['', 'Environment:', renderTable(rows, { indent: '  ' })].join('\n');
}

/** `run-job pull-secret`: the job, configured from the environment like the upstream Go job. */
export function runJobCommand(): Command {
  return new Command('run-job')
    .description('Run a job. Jobs: pull-secret (store a cluster pull secret in the secret store).')
    .argument('<job>', 'job name: pull-secret')
    .option('--dry-run', 'validate everything and read the store, but write nothing', false)
    .addHelpText('after', environmentHelp)
    .addHelpText('after', '\nExit codes: 0 success, 1 runtime failure, 2 usage or configuration error.')
    .action(async (job: string, options: { dryRun: boolean }, command: Command) => {
      if (job !== 'pull-secret')
        command.error(`unknown job "${job}": the only job is pull-secret`, { exitCode: 2 });
      process.exitCode = await runPullSecret(options.dryRun);
    });
}

async function runPullSecret(dryRun: boolean): Promise<number> {
  let config;
  try {
    config = loadJobConfig(process.env);
  } catch (err) {
    // The status reporter still needs to hear about a configuration failure.
    await writeFailureResult(process.env.RESULTS_PATH, toPullSecretError(err));
    return reportFailure(err);
  }
  const resultsPath = config.resultsPath;
  // Kubernetes stops a Job's pod with SIGTERM: abort the in-flight step instead of dying mid-write.
  const controller = new AbortController();
  let job: Promise<unknown> = Promise.resolve();
  let ending: Promise<never> | undefined;
  /**
   * Ends the run as a failure whatever the job is doing: abort it, let it settle (bounded: a call
   * stuck on an unreachable store may ignore the abort), then write this failure's result and exit.
   */
  const endAsFailure = (error: PullSecretError, reason?: string): Promise<never> => {
    ending ??= (async () => {
      controller.abort();
      // The aborted job writes its own (ABORTED) result: let it settle first, so this one stays.
      await Promise.race([
        job.catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, 2000).unref()),
      ]);
      await writeFailureResult(resultsPath, error, { reason });
      process.exit(reportFailure(error));
    })();
    return ending;
  };
  // A stray rejection from a dependency ends the job as a failure the sidecar can read, not a crash.
  const restoreGuard = onStrayError(async (_kind, error) => endAsFailure(error));
  const onSignal = (signal: NodeJS.Signals) =>
    void endAsFailure(
      new PullSecretError('ABORTED', `the job was stopped by ${signal} before it finished`),
      'JobTerminated',
    );
  const timeoutMessage = `the job did not finish within JOB_TIMEOUT (${config.timeoutSeconds} s)`;
  const deadline = setTimeout(
    () => void endAsFailure(new PullSecretError('ABORTED', timeoutMessage), 'JobTimeout'),
    config.timeoutSeconds * 1000,
  );
  // `on`, not `once`: the store's lock library re-raises a signal nobody else listens to.
  process.on('SIGTERM', onSignal).on('SIGINT', onSignal);
  try {
    const logger = createLogger({ level: config.logLevel });
    job = runPullSecretJob(config, logger, { dryRun, signal: controller.signal });
    await job;
    return 0;
  } catch (err) {
    // A stray error, a signal or the deadline aborted the job: that ending reports it and exits.
    if (ending !== undefined) return ending;
    // The job writes its own failure result; this covers what escaped it (e.g. closing the store).
    await writeFailureResult(resultsPath, toPullSecretError(err), { keepFailure: true });
    return reportFailure(err);
  } finally {
    clearTimeout(deadline);
    if (ending === undefined) {
      process.off('SIGTERM', onSignal).off('SIGINT', onSignal);
      restoreGuard();
    }
  }
}

/**
 * Writes a failure result file so the exit code and the file always agree. With `keepFailure`, a
 * failure result already written by the job (it names the cluster and secret) is kept; `reason`
 * overrides the code's (JobTimeout, JobTerminated). Never throws:
 * the caller is already reporting a failure.
 */
async function writeFailureResult(
  path: string | undefined,
  error: PullSecretError,
  options: { keepFailure?: boolean; reason?: string } = {},
): Promise<void> {
  if (!path) return;
  if (options.keepFailure === true && (await readStatus(path)) === 'failure') return;
  await writeResultFile(path, {
    status: 'failure',
    reason: options.reason ?? failureReason(error.code),
    message: error.message,
    error_code: error.code,
    timestamp: new Date().toISOString(),
  }).catch(() => undefined);
}

async function readStatus(path: string): Promise<unknown> {
  // Never open a FIFO or device: reading one could block forever.
  if (resultPathProblem(path) !== undefined) return undefined;
  try {
    return (JSON.parse(await readFile(path, 'utf8')) as { status?: unknown }).status;
  } catch {
    return undefined;
  }
}
