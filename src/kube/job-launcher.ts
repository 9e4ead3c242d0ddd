/**
 * The Job-mode launcher: one cluster generation as a Kubernetes Job, its data Secret
 * (job-data-secret.ts), the wait for its outcome and the outcome read from the Job's conditions.
 */
import { BatchV1Api, CoreV1Api, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import { PullSecretError } from '../errors/index.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { isManaged, quoteIdentifier } from '../pullsecret/identifiers.js';
import { Redactor } from '../pullsecret/redact.js';
import type { RetryPolicy } from '../util/retry.js';
import { loadKubeConfig, makeApiClient, withSignal, type LoadKubeConfigOptions } from './client.js';
import { apiFailure, classifyKubeError } from './errors.js';
import {
  removeClusterJobs,
  removeFinishedJobOfOtherPin,
  stopOlderJobs,
  type JobCleanupOptions,
  type JobCleanupResult,
} from './job-cleanup.js';
import {
  buildPullSecretJob,
  jobDataSecretName,
  JOB_DEFAULTS,
  JOB_PIN_LABEL,
  PIN_TOKEN_NONE,
  type JobSettings,
} from './job-manifest.js';
import { readJobReport, type JobReport } from './job-report.js';
import { terminalCondition, waitForJob } from './job-watch.js';
import { ensureDataSecret, jobRef, removeStaleDataSecret } from './job-data-secret.js';
import { defaultManagementNamespace } from './pull-secret-manifest.js';

/** One cluster generation to run as a Job. */
export interface JobLaunchRequest extends JobSettings {
  clusterId: string;
  generation: number;
  /** The pull secret bytes as given; they reach the pod only through the data Secret. */
  pullSecret: Uint8Array;
  /** Non-secret job settings (SECRET_STORE, store settings, retry, LOG_LEVEL...). CLUSTER_ID is added. */
  env: Readonly<Record<string, string>>;
  /** Also provision the cluster's Kubernetes Secret: sets KUBERNETES_TARGET=api and MANAGEMENT_NAMESPACE. */
  kubernetesSecret?: { namespace?: string };
  /**
   * The cluster's rollback pin state (label-safe, `none` by default): a finished Job of this generation
   * created under another pin state is deleted and run again.
   */
  pinToken?: string;
}

interface JobLaunchOptions {
  signal?: AbortSignal;
  /** How long to wait for the Job to finish; default its activeDeadlineSeconds plus 60 s. */
  timeoutMs?: number;
}

/** The outcome as the status reporter needs it, in the result file's terms; read from the Job's conditions. */
interface JobStatusResult {
  status: 'success' | 'failure';
  /**
   * The condition's reason (e.g. BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy), else
   * JobSucceeded / JobFailed.
   */
  reason: string;
  message: string;
  cluster_id: string;
  timestamp: string;
}

export interface JobLaunchResult {
  outcome: 'succeeded' | 'failed';
  jobName: string;
  namespace: string;
  /** The Job existed already (same generation): nothing was created for it. */
  reused: boolean;
  result: JobStatusResult;
  message: string;
  /**
   * What the Job's last pod reported (termination message): versions, registry verification, error
   * code. Absent when unreadable.
   */
  report?: JobReport;
}

/** The logger shape the launcher uses (pino's `Logger` fits). Fields never carry Secret data. */
interface JobLauncherLogger {
  info(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

interface JobLauncherOptions {
  kubeConfig: KubeConfig;
  logger?: JobLauncherLogger;
  /** List retries and re-watch pacing while waiting; see DEFAULT_WATCH_RETRY. */
  watchRetry?: RetryPolicy;
}

const MIN_CREDENTIAL_LENGTH = 8;

function jobEnv(request: JobLaunchRequest): Record<string, string> {
  const given = request.env.CLUSTER_ID;
  if (given !== undefined && given !== request.clusterId)
    throw new PullSecretError(
      'CONFIG_INVALID',
      'Job environment variable CLUSTER_ID differs from the cluster being launched',
    );
  const env: Record<string, string> = { ...request.env, CLUSTER_ID: request.clusterId };
  if (request.kubernetesSecret !== undefined) {
    env.KUBERNETES_TARGET = 'api';
    env.MANAGEMENT_NAMESPACE =
      request.kubernetesSecret.namespace ?? defaultManagementNamespace(request.clusterId);
  }
  // The env map is written into the Job spec in clear: refuse it if credentials slipped in.
  const credentials = credentialStrings(Buffer.from(request.pullSecret).toString('utf8')).filter(
    (c) => c.length >= MIN_CREDENTIAL_LENGTH,
  );
  for (const [name, value] of Object.entries(env)) {
    if (credentials.some((c) => value.includes(c)))
      throw new PullSecretError(
        'CONFIG_INVALID',
        `Job environment variable ${name} holds pull secret credentials; ` +
          'they may only reach the Job through the data Secret',
      );
  }
  return env;
}

/**
 * Runs `pull-secret run-job pull-secret` for one cluster generation as a Kubernetes Job and waits
 * for its outcome.
 *
 * - The Job `pullsecret-{id}-gen{generation}` exists (same generation again): it is reused. A
 *   finished Job's outcome is returned with zero writes; a running one is watched (after making
 *   sure its data Secret exists, in case an earlier launch stopped between the two creates).
 * - Otherwise: Jobs of older generations still running are stopped (so a superseded generation can
 *   never write after this one), a data Secret left by an earlier generation is deleted (so the new
 *   pod cannot start with stale data), the Job is created, then the data Secret with an owner
 *   reference to it.
 * - The outcome comes from the Job's conditions (Complete → succeeded, Failed → failed with the
 *   condition's reason and message); the result file inside the pod is not read, so the status
 *   reporter works from Job conditions.
 *
 * The pull secret is never put in the Job spec, an annotation, a log field or an error message.
 * @throws PullSecretError: IDENTIFIER_INVALID / CONFIG_* for unusable input; SECRET_UNMANAGED when the
 *   Job or data Secret exists without `managed-by=hyperfleet`; KUBE_* for Kubernetes API failures
 *   (classified, retryable where it helps); JOB_IN_PROGRESS (retryable) when the Job is still running
 *   at the deadline; JOB_FAILED (retryable) when the Job is deleted while watched; CLEANUP_PENDING
 *   (retryable) when an older generation's Job does not stop in time; ABORTED.
 */
export class PullSecretJobLauncher {
  private readonly core: CoreV1Api;
  private readonly batch: BatchV1Api;

  constructor(private readonly options: JobLauncherOptions) {
    this.core = makeApiClient(options.kubeConfig, CoreV1Api);
    this.batch = makeApiClient(options.kubeConfig, BatchV1Api);
  }

  /** Removes every Job and data Secret of the cluster; see `removeClusterJobs` for the contract and errors. */
  removeClusterJobs(clusterId: string, options: JobCleanupOptions = {}): Promise<JobCleanupResult> {
    return removeClusterJobs({ batch: this.batch, core: this.core }, clusterId, options);
  }

  async launch(request: JobLaunchRequest, options: JobLaunchOptions = {}): Promise<JobLaunchResult> {
    const { pullSecret: _bytes, kubernetesSecret: _target, ...settings } = request;
    const job = buildPullSecretJob({ ...settings, env: jobEnv(request) });
    const namespace = job.metadata?.namespace ?? JOB_DEFAULTS.namespace;
    const name = job.metadata?.name ?? '';
    const timeoutMs =
      options.timeoutMs ??
      ((job.spec?.activeDeadlineSeconds ?? JOB_DEFAULTS.activeDeadlineSeconds) + 60) * 1000;
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = options.signal === undefined ? deadline : AbortSignal.any([options.signal, deadline]);
    const fields = { cluster_id: request.clusterId, namespace, job: name, generation: request.generation };
    try {
      let current = await this.readJob(namespace, name, signal);
      if (current !== undefined && (await this.removeIfPinChanged(current, request, namespace, signal))) {
        this.options.logger?.info(fields, 'pin changed since the finished job ran; running it again');
        current = undefined;
      }
      let reused = current !== undefined;
      if (current === undefined) {
        const stopped = await stopOlderJobs(this.batch, request.clusterId, request.generation, {
          namespace,
          signal,
        });
        if (stopped > 0)
          this.options.logger?.info({ ...fields, stopped }, 'stopped jobs of older generations');
        await removeStaleDataSecret(this.core, namespace, jobDataSecretName(request.clusterId), signal);
        current = await this.createJob(job, signal);
        reused = current === undefined;
        current ??= await this.readJob(namespace, name, signal);
        if (current === undefined)
          throw new PullSecretError(
            'KUBE_CONFLICT',
            `Job ${jobRef(namespace, name)} was deleted right after another launcher created it`,
          );
      }
      if (!isManaged(current.metadata?.labels)) {
        throw new PullSecretError(
          'SECRET_UNMANAGED',
          `Job ${jobRef(namespace, name)} exists without label managed-by=hyperfleet; refusing to use it`,
        );
      }
      this.options.logger?.info({ ...fields, reused }, reused ? 'reusing existing job' : 'job created');
      if (terminalCondition(current) === undefined) {
        await ensureDataSecret(
          this.core,
          request,
          namespace,
          { name, uid: current.metadata?.uid ?? '' },
          !reused,
          signal,
        );
        current = await waitForJob({
          kubeConfig: this.options.kubeConfig,
          batch: this.batch,
          namespace,
          name,
          signal,
          retry: this.options.watchRetry,
          onRelist: (f) => this.options.logger?.debug({ ...fields, ...f }, 'job watch ended, listing again'),
        });
      }
      const mask = credentialMask(request);
      const result = resultOf(current, request, mask);
      const report = masked(await readJobReport(this.core, namespace, current.metadata?.uid, signal), mask);
      this.options.logger?.info(
        { ...fields, reused, outcome: result.status, reason: result.reason, report_reason: report?.reason },
        'job finished',
      );
      const outcome = result.status === 'success' ? 'succeeded' : 'failed';
      const message =
        outcome === 'succeeded'
          ? `Job ${jobRef(namespace, name)} succeeded`
          : `Job ${jobRef(namespace, name)} failed: ${result.reason}: ${result.message}`;
      return {
        outcome,
        jobName: name,
        namespace,
        reused,
        result,
        message,
        ...(report === undefined ? {} : { report }),
      };
    } catch (err) {
      if (options.signal?.aborted)
        throw new PullSecretError('ABORTED', `launch of Job ${jobRef(namespace, name)} aborted`, {
          cause: err,
        });
      if (deadline.aborted) {
        throw new PullSecretError(
          'JOB_IN_PROGRESS',
          `Job ${jobRef(namespace, name)} did not finish within ${timeoutMs} ms; ` +
            'launching the same generation again watches it further',
          { cause: err },
        );
      }
      throw err;
    }
  }

  /** Deletes the finished same-generation Job when the cluster's pin state changed since it was created. */
  private async removeIfPinChanged(
    job: V1Job,
    request: JobLaunchRequest,
    namespace: string,
    signal: AbortSignal,
  ): Promise<boolean> {
    const token = request.pinToken ?? PIN_TOKEN_NONE;
    if (terminalCondition(job) === undefined) return false;
    if ((job.metadata?.labels?.[JOB_PIN_LABEL] ?? PIN_TOKEN_NONE) === token) return false;
    await removeFinishedJobOfOtherPin(this.batch, request.clusterId, request.generation, token, {
      namespace,
      signal,
    });
    return true;
  }

  private async readJob(namespace: string, name: string, signal: AbortSignal): Promise<V1Job | undefined> {
    try {
      return await this.batch.readNamespacedJob({ namespace, name }, withSignal(signal));
    } catch (err) {
      if (apiFailure(err)?.code === 404) return undefined;
      throw classifyKubeError(err, { verb: 'read', kind: 'Job', namespace, name });
    }
  }

  /** The created Job, or undefined when it already exists (a concurrent launch of the same generation). */
  private async createJob(job: V1Job, signal: AbortSignal): Promise<V1Job | undefined> {
    const namespace = job.metadata?.namespace ?? '';
    const name = job.metadata?.name ?? '';
    try {
      return await this.batch.createNamespacedJob({ namespace, body: job }, withSignal(signal));
    } catch (err) {
      const failure = apiFailure(err);
      if (failure?.code === 409) return undefined;
      if (failure?.code === 404 && failure.detailsKind === 'namespaces') {
        throw new PullSecretError(
          'CONFIG_INVALID',
          `namespace ${quoteIdentifier(namespace)} does not exist; Job mode runs its Jobs there`,
          { cause: err },
        );
      }
      throw classifyKubeError(err, { verb: 'create', kind: 'Job', namespace, name });
    }
  }
}

/** Masks the request's credentials in a text: a Job's condition or report may have quoted one. */
function credentialMask(request: JobLaunchRequest): (text: string) => string {
  const redactor = new Redactor();
  redactor.register(credentialStrings(Buffer.from(request.pullSecret).toString('utf8')));
  return (text) => redactor.redact(text);
}

/** The Job's terminal condition in result-file terms; the message is masked if it ever quoted a credential. */
function resultOf(job: V1Job, request: JobLaunchRequest, mask: (text: string) => string): JobStatusResult {
  const condition = terminalCondition(job);
  const success = condition?.type === 'Complete';
  const name = job.metadata?.name ?? '';
  const at = condition?.lastTransitionTime ?? job.status?.completionTime;
  return {
    status: success ? 'success' : 'failure',
    reason: condition?.reason || (success ? 'JobSucceeded' : 'JobFailed'),
    message: mask(condition?.message || (success ? `Job ${name} completed` : `Job ${name} failed`)).slice(
      0,
      1000,
    ),
    cluster_id: request.clusterId,
    timestamp: (at === undefined ? new Date() : new Date(at)).toISOString(),
  };
}

/** The report with its message masked if it ever quoted a credential of the request, as for the condition. */
function masked(report: JobReport | undefined, mask: (text: string) => string): JobReport | undefined {
  if (report === undefined) return undefined;
  return { ...report, message: mask(report.message) };
}

/** A launcher for the cluster found by `loadKubeConfig`. Makes no network call. @throws CONFIG_INVALID. */
export function createPullSecretJobLauncher(
  options: LoadKubeConfigOptions & { logger?: JobLauncherLogger; watchRetry?: RetryPolicy } = {},
): PullSecretJobLauncher {
  return new PullSecretJobLauncher({
    kubeConfig: loadKubeConfig(options).kubeConfig,
    logger: options.logger,
    watchRetry: options.watchRetry,
  });
}
