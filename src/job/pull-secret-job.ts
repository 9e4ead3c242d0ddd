import { performance } from 'node:perf_hooks';
import { failureReason, PullSecretError, toPullSecretError, describeError } from '../errors/index.js';
import type { Logger } from '../observability/logger.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { assertClusterId, assertLabels, assertSecretId, defaultSecretId, managedLabels } from '../pullsecret/identifiers.js';
import { redactor } from '../pullsecret/redact.js';
import { validatePullSecret } from '../pullsecret/validate.js';
import { pushSecret, type PushResult } from '../stores/push.js';
import type { SecretStore } from '../stores/store.js';
import { createStore } from '../stores/registry.js';
import type { JobConfig } from './config.js';
import { writeResultFile, type JobResultFile } from './result-file.js';
import { provisionKubernetesSecret } from './provision-kubernetes.js';
import type { ApplyResult } from '../kube/target.js';

export interface JobRunOptions {
  dryRun?: boolean;
  signal?: AbortSignal;
  /** Use this store instead of building one from the config (tests, the adapter's shared client). */
  store?: SecretStore;
}

/** What a successful run did. */
export interface JobOutcome extends PushResult {
  secretName: string;
  dryRun: boolean;
  /** The Kubernetes Secret step, when a target is configured. */
  kubernetes?: ApplyResult;
}

const SUCCESS_REASON = { created: 'SecretCreated', updated: 'SecretUpdated', unchanged: 'SecretUnchanged' } as const;

/**
 * The pull secret job (seed 003's `run-job pull-secret`, made idempotent): validate the input, then
 * store it with `pushSecret`, log each step as one JSON line, and write the result file if asked.
 * The final log line (`operation: completed`) carries the outcome.
 *
 * @throws PullSecretError (after logging it and writing the failure result file).
 */
export async function runPullSecretJob(config: JobConfig, logger: Logger, options: JobRunOptions = {}): Promise<JobOutcome> {
  // Before anything can echo it: teach the redactor every credential string of the input.
  redactor.register(credentialStrings(config.pullSecretData));
  const started = performance.now();
  const secretName = config.secretName ?? defaultSecretId(config.clusterId);
  const log = logger.child({ cluster_id: config.clusterId, ...projectField(config) });
  const dryRun = options.dryRun ?? false;
  let store = options.store;
  try {
    log.info({ operation: 'start', store: config.storeKind, dry_run: dryRun }, 'Starting pull secret storage operation');
    assertClusterId(config.clusterId);
    assertSecretId(secretName);
    const labels = managedLabels(config.clusterId);
    assertLabels(labels);
    store ??= await createStore(config.store.kind, config.store.config);
    const secret = validatePullSecret(config.pullSecretData, { maxBytes: store.maxPayloadBytes, targetName: `${store.kind} store` });
    log.info({ operation: 'validate', registries: secret.registries }, 'Pull secret is valid');

    const result = await pushSecret(store, { secretId: secretName, labels, payload: secret.raw, dryRun }, {
      retry: config.retry,
      signal: options.signal,
      onEvent: ({ level, message, ...fields }) => log[level ?? 'info'](fields, message),
    });
    const outcome: JobOutcome = { ...result, secretName, dryRun };
    if (config.kubernetes.target !== 'none' && !dryRun && result.stored !== undefined && result.version !== undefined) {
      outcome.kubernetes = await provisionKubernetesSecret(
        config.kubernetes,
        { clusterId: config.clusterId, stored: result.stored, secretPath: result.secretPath, version: result.version },
        log,
        options.signal,
      );
    }
    log.info(
      {
        operation: 'completed',
        outcome: result.outcome,
        dry_run: dryRun,
        secret_name: secretName,
        version: result.versionPath,
        kubernetes_outcome: outcome.kubernetes?.outcome,
        duration_ms: Math.round(performance.now() - started),
      },
      completionMessage(outcome),
    );
    await writeResult(config, {
      status: 'success',
      reason: dryRun ? 'DryRunSucceeded' : SUCCESS_REASON[result.outcome],
      message: completionMessage(outcome),
      cluster_id: config.clusterId,
      secret_name: secretName,
      secret_path: result.secretPath,
      version: result.version,
      version_path: result.versionPath,
      outcome: result.outcome,
      dry_run: dryRun,
      kubernetes_secret: outcome.kubernetes && { namespace: outcome.kubernetes.namespace, name: outcome.kubernetes.name, outcome: outcome.kubernetes.outcome },
      timestamp: new Date().toISOString(),
    });
    return outcome;
  } catch (err) {
    const error = toPullSecretError(err);
    log.error({ operation: 'failed', ...describeError(error), duration_ms: Math.round(performance.now() - started) }, 'Pull secret storage operation failed');
    await writeResult(config, {
      status: 'failure',
      reason: failureReason(error.code),
      message: error.message,
      cluster_id: config.clusterId,
      secret_name: secretName,
      error_code: error.code,
      dry_run: dryRun,
      timestamp: new Date().toISOString(),
    }).catch((writeErr: unknown) => log.error({ operation: 'write-result', ...describeError(writeErr) }, 'Could not write the result file'));
    throw error;
  } finally {
    if (options.store === undefined) await store?.close();
  }
}

function completionMessage(outcome: JobOutcome): string {
  const verb = outcome.dryRun
    ? { created: 'would create the secret', updated: 'would add a new version', unchanged: 'nothing to change' }
    : { created: 'Created pull secret', updated: 'Updated pull secret with a new version', unchanged: 'Pull secret unchanged, no new version' };
  return outcome.dryRun ? `Dry run: ${verb[outcome.outcome]}` : verb[outcome.outcome];
}

/** The upstream job logs `gcp_project` on every line; other stores have no project. */
function projectField(config: JobConfig): { gcp_project?: string } {
  const projectId = (config.store.config as { projectId?: unknown }).projectId;
  return typeof projectId === 'string' ? { gcp_project: projectId } : {};
}

async function writeResult(config: JobConfig, result: JobResultFile): Promise<void> {
  if (config.resultsPath === undefined) return;
  try {
    await writeResultFile(config.resultsPath, result);
  } catch (err) {
    throw new PullSecretError('CONFIG_INVALID', `cannot write the result file RESULTS_PATH (${config.resultsPath})`, { cause: err });
  }
}
