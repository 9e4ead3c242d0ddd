import { performance } from 'node:perf_hooks';
import { describeError, failureReason, PullSecretError, toPullSecretError } from '../errors/index.js';
import { createKubernetesTarget } from '../kube/target-config.js';
import type { Logger } from '../observability/logger.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { deriveClusterNames, type ClusterNames } from '../pullsecret/cluster-names.js';
import type { PinFacts, ReconcileFacts, ReconcileStep } from '../reconcile/steps.js';
import { factsOf } from '../reconcile/failure-facts.js';
import { verificationNote } from '../reconcile/status-report.js';
import { transferMergeStep } from '../account-service/transfer-merge-step.js';
import { retentionStep } from '../retention/step.js';
import { pinStep } from '../retention/pin-step.js';
import { ownNamespace, pinStoreFor } from '../retention/pin-store.js';
import type { RetentionRunner } from '../retention/runner.js';
import { verificationStep, type VerificationGate } from '../verification/index.js';
import { defaultSecretId } from '../pullsecret/identifiers.js';
import { redactor } from '../pullsecret/redact.js';
import { reconcilePullSecret, type ReconcileResult } from '../reconcile/reconcile-pull-secret.js';
import { createStore, scopeLogFields, scopeOf } from '../stores/registry.js';
import type { SecretStore } from '../stores/store.js';
import type { JobConfig } from './config.js';
import { jobRetentionRunner, jobVerificationGate } from './lifecycle.js';
import { checkManifestDir, checkResultsPath } from './path-checks.js';
import { writeFile } from 'node:fs/promises';
import { terminationMessage, writeResultFile, type JobResultFile, type ResultPin } from './result-file.js';

interface JobRunOptions {
  dryRun?: boolean;
  signal?: AbortSignal;
  /** Use this store instead of building one from the config (tests). */
  store?: SecretStore;
  /** Epoch ms for the retention pass (tests; default the system clock). */
  clock?: () => number;
}

const SUCCESS_REASON = {
  created: 'SecretCreated',
  updated: 'SecretUpdated',
  unchanged: 'SecretUnchanged',
} as const;

/**
 * The pull secret job (`pull-secret run-job pull-secret`, idempotent): `reconcilePullSecret`
 * with a store and Kubernetes target built from the environment, each step logged as one JSON line,
 * the result file written if asked. The final log line (`operation: completed`) carries the outcome.
 *
 * @throws PullSecretError (after logging it and writing the failure result file).
 */
export async function runPullSecretJob(
  config: JobConfig,
  logger: Logger,
  options: JobRunOptions = {},
): Promise<ReconcileResult> {
  // Before anything can echo it: teach the redactor every credential string of the input.
  redactor.register(credentialStrings(config.pullSecretData));
  const started = performance.now();
  const secretName = config.secretName ?? defaultSecretId(config.clusterId);
  const log = logger.child({
    cluster_id: config.clusterId,
    ...scopeLogFields(config.store.kind, scopeOf(config.store.kind, config.store.config)),
  });
  const dryRun = options.dryRun ?? false;
  let store = options.store;
  let verification: ReturnType<typeof jobVerificationGate>;
  try {
    log.info(
      { operation: 'start', store: config.storeKind, dry_run: dryRun },
      'Starting pull secret storage operation',
    );
    const names = await checkBeforeWriting(config, dryRun);
    // Before the store: an unreadable VERIFICATION_CA_FILE fails the run before anything is opened.
    verification = jobVerificationGate(config.verification);
    const retention = jobRetentionRunner(config.retention, config.retry, options.clock);
    store ??= await createStore(config.store.kind, config.store.config);
    const kubernetes =
      config.kubernetes.target === 'none' || dryRun
        ? undefined
        : await createKubernetesTarget(config.kubernetes, log);
    const result = await reconcilePullSecret(
      {
        clusterId: config.clusterId,
        secretName,
        pullSecretData: config.pullSecretData,
        namespace: config.kubernetes.namespace,
        dryRun,
        names,
      },
      {
        store,
        kubernetes,
        retry: config.retry,
        log,
        signal: options.signal,
        steps: [...(await jobPin(config)), ...jobSteps(config, verification, retention)],
      },
    );
    const message = completionMessage(result);
    log.info(
      {
        operation: 'completed',
        outcome: result.outcome,
        dry_run: dryRun,
        secret_name: secretName,
        version: result.versionPath,
        kubernetes_outcome: result.kubernetes?.outcome,
        ...withoutCurrentVersion(lifecycleResult(result)),
        duration_ms: Math.round(performance.now() - started),
      },
      message,
    );
    await writeResult(config, {
      status: 'success',
      reason: dryRun ? 'DryRunSucceeded' : SUCCESS_REASON[result.outcome],
      message,
      cluster_id: config.clusterId,
      secret_name: secretName,
      secret_path: result.secretPath,
      version: result.version,
      version_path: result.versionPath,
      outcome: result.outcome,
      dry_run: dryRun,
      kubernetes_secret: result.kubernetes && {
        namespace: result.kubernetes.namespace,
        name: result.kubernetes.name,
        outcome: result.kubernetes.outcome,
      },
      ...lifecycleResult(result),
      timestamp: new Date().toISOString(),
    });
    return result;
  } catch (err) {
    const error = toPullSecretError(err);
    log.error(
      { operation: 'failed', ...describeError(error), duration_ms: Math.round(performance.now() - started) },
      'Pull secret storage operation failed',
    );
    await writeResult(config, {
      status: 'failure',
      reason: failureReason(error.code),
      message: error.message,
      cluster_id: config.clusterId,
      secret_name: secretName,
      error_code: error.code,
      dry_run: dryRun,
      // What the run found before it failed: the registry verification, the version still served.
      ...lifecycleResult(factsOf(error)),
      timestamp: new Date().toISOString(),
    }).catch((writeErr: unknown) =>
      log.error({ operation: 'write-result', ...describeError(writeErr) }, 'Could not write the result file'),
    );
    throw error;
  } finally {
    // Kept-alive registry connections would hold the process open.
    verification?.verifier.close();
    if (options.store === undefined) await store?.close();
  }
}

/** The `completed` log line's lifecycle fields: the result file's, the current version being logged as `version`. */
function withoutCurrentVersion({
  current_version: _current,
  ...fields
}: ReturnType<typeof lifecycleResult>): Record<string, unknown> {
  return fields;
}

/**
 * The result file's versions (retention on) and registry verification, as the adapter's status data
 * carries them; of a failure, what it found before it (`current_version`: the version still served).
 */
function lifecycleResult(
  result: Readonly<ReconcileFacts> & { version?: string },
): Pick<
  JobResultFile,
  | 'current_version'
  | 'previous_version'
  | 'previous_version_state'
  | 'previous_grace_ends_at'
  | 'registry_verification'
  | 'pin'
> {
  const previous = result.retention?.previous;
  return {
    ...(result.version === undefined && result.servedVersion === undefined
      ? {}
      : { current_version: result.retention?.currentVersion ?? result.version ?? result.servedVersion }),
    ...(previous === undefined
      ? {}
      : {
          previous_version: previous.version,
          previous_version_state: previous.state,
          previous_grace_ends_at: previous.graceEndsAt,
        }),
    ...(result.verification === undefined ? {} : { registry_verification: result.verification }),
    ...(result.pin === undefined ? {} : { pin: resultPin(result.pin) }),
  };
}

/** The pin in the result file's snake_case. */
function resultPin(pin: PinFacts): ResultPin {
  const { sourceVersion, expiresAt, ...rest } = pin;
  return {
    source_version: sourceVersion,
    ...rest,
    ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
  };
}

/**
 * What can be checked without a store or Kubernetes call, checked before the first one: every name
 * (the Kubernetes ones too when a Kubernetes target is configured, also in a dry run), RESULTS_PATH
 * and, when manifests are written, MANIFEST_DIR (path-checks.ts), so a run that would fail at its
 * end fails before writing anything. Returns the names, which the reconcile takes as they are.
 * @throws PullSecretError IDENTIFIER_INVALID or CONFIG_INVALID (exit 2).
 */
async function checkBeforeWriting(config: JobConfig, dryRun: boolean): Promise<ClusterNames> {
  const names = deriveClusterNames({
    clusterId: config.clusterId,
    secretName: config.secretName,
    namespace: config.kubernetes.namespace,
    kubernetes: config.kubernetes.target !== 'none',
  });
  if (config.resultsPath !== undefined) await checkResultsPath(config.resultsPath);
  if (config.kubernetes.target === 'manifests' && !dryRun)
    await checkManifestDir(config.kubernetes.manifestDir);
  return names;
}

/** The rollback pin's step (docs/retention.md): the pin in the Job's own namespace, or its directory. */
async function jobPin(config: JobConfig): Promise<ReconcileStep[]> {
  const { target, manifestDir, kubeconfigPath } = config.kubernetes;
  const pins = await pinStoreFor({
    target,
    manifestDir,
    kubeconfig: kubeconfigPath,
    namespace: ownNamespace(),
  });
  return pins === undefined ? [] : [pinStep(pins)];
}

/** The reconcile's plug-in steps in the Job, one line each, in the adapter's order. */
function jobSteps(
  config: JobConfig,
  verification: VerificationGate | undefined,
  retention: RetentionRunner | undefined,
): ReconcileStep[] {
  return [
    ...(config.transferRecords === true ? [transferMergeStep] : []),
    ...(verification === undefined ? [] : [verificationStep(verification)]),
    ...(retention === undefined ? [] : [retentionStep(retention)]),
  ];
}

function completionMessage(result: ReconcileResult): string {
  if (result.dryRun) {
    const planned = {
      created: 'would create the secret',
      updated: 'would add a new version',
      unchanged: 'nothing to change',
    };
    return `Dry run: ${planned[result.outcome]}`;
  }
  const done = {
    created: 'Created pull secret',
    updated: 'Updated pull secret with a new version',
    unchanged: 'Pull secret unchanged, no new version',
  };
  return `${done[result.outcome]}${verificationNote(result.verification)}`;
}

async function writeResult(config: JobConfig, result: JobResultFile): Promise<void> {
  if (config.terminationMessagePath !== undefined) {
    // Best effort: without it the adapter reports from the Job's conditions alone.
    await writeFile(config.terminationMessagePath, terminationMessage(result)).catch(() => undefined);
  }
  if (config.resultsPath === undefined) return;
  try {
    await writeResultFile(config.resultsPath, result);
  } catch (err) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `cannot write the result file RESULTS_PATH (${config.resultsPath})`,
      { cause: err },
    );
  }
}
