import { PullSecretError, toPullSecretError } from '../errors/index.js';
import type { JobLaunchResult } from '../kube/job-launcher.js';
import type { Logger } from '../observability/logger.js';
import { jobDataSecretName, pullSecretJobName } from '../kube/job-manifest.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { redactor } from '../pullsecret/redact.js';
import { validatePullSecret } from '../pullsecret/validate.js';
import { projectJobEnv } from '../stores/config-env.js';
import { storeFactory } from '../stores/registry.js';
import type { AdapterConfig } from './config.js';
import type { ClusterCleanup, ClusterWork, Executor } from '../reconcile/executor.js';
import type { WorkOutcome, WorkTarget } from '../reconcile/outcome.js';
import { withFacts } from '../reconcile/failure-facts.js';
import { lifecycleJobEnv } from '../job/lifecycle.js';
import { pinToken, type PinStore } from '../retention/pin.js';
import { removeClusterSecrets, type ClusterResources } from './secret-cleanup.js';

/**
 * Kubernetes Job execution: each cluster's work runs as `pull-secret run-job
 * pull-secret` in the Job `pullsecret-{id}-gen{generation}`. Input errors are caught here first
 * (no Job for a pull secret that can never work); a Job still running when `waitSeconds` pass is
 * reported as in progress and found again, by its generation, on the next event.
 *
 * Cleanup of a deleted cluster removes its Jobs of every generation and their data Secrets (found
 * by label), stopping a Job still running, and only once they are gone the Kubernetes Secret and
 * the cloud secret (`removeClusterSecrets`), so a late Job can never write the Secret again.
 */
export async function createJobExecutor(
  config: AdapterConfig,
  logger: Logger,
  resources: ClusterResources,
  /** The adapter's rollback pins (its watch cache): a pin change runs the generation's Job again. */
  pins?: PinStore,
): Promise<Executor> {
  const { createPullSecretJobLauncher } = await import('../kube/job-launcher.js');
  const launcher = createPullSecretJobLauncher({ kubeconfigPath: config.kubernetes.kubeconfig, logger });
  const job = config.execution.job;
  // Registry verification and retention run in each Job (VERIFICATION_*, RETENTION_*); the CA file is read once, here.
  const lifecycleEnv = lifecycleJobEnv(config);
  /** Checks everything, then launches (or finds) the cluster's Job and waits for it, bounded. */
  async function launchFor(work: ClusterWork, signal: AbortSignal): Promise<WorkOutcome> {
    const jobBase = { target: work.target, jobNamespace: job.namespace };
    try {
      // Every name the Job and its data Secret use, checked before the first Kubernetes call (the
      // cluster's names were checked when it was resolved, with the Kubernetes checks when a Secret is written).
      pullSecretJobName(work.clusterId, work.generation);
      jobDataSecretName(work.clusterId);
      // The store's per-version limit, checked before a Job is launched.
      const store = storeFactory(work.target.store);
      validatePullSecret(work.pullSecret, {
        maxBytes: store.maxPayloadBytes,
        targetName: `${work.target.store} store`,
      });
      const route = config.providers[work.target.provider];
      const env = {
        ...projectJobEnv(
          config,
          { kind: work.target.store, settings: route?.settings ?? {} },
          work.target.settings,
        ),
        SECRET_NAME: work.target.secretName,
        ...lifecycleEnv,
        ...(config.accountService === undefined ? {} : { TRANSFER_RECORDS: 'true' }),
      };
      const result = await launcher.launch(
        {
          clusterId: work.clusterId,
          generation: work.generation,
          pullSecret: Buffer.from(work.pullSecret),
          env,
          image: job.image,
          namespace: job.namespace,
          activeDeadlineSeconds: job.timeoutSeconds,
          // What the store's pods need (Azure: the workload identity label).
          pod: store.jobPod,
          kubernetesSecret:
            config.kubernetes.target === 'api' ? { namespace: work.target.namespace } : undefined,
          pinToken: pinToken(await pins?.get(work.clusterId, signal)),
        },
        { signal, timeoutMs: job.waitSeconds * 1000 },
      );
      if (result.outcome === 'succeeded')
        return {
          kind: 'job-succeeded',
          ...jobBase,
          jobName: result.jobName,
          ...(result.report === undefined ? {} : { report: result.report }),
        };
      return (
        verificationFailure(result, work.target) ?? {
          kind: 'job-failed',
          ...jobBase,
          jobName: result.jobName,
          message: `${result.result.reason}: ${result.message}`,
          ...(result.report === undefined ? {} : { report: result.report }),
        }
      );
    } catch (err) {
      const error = toPullSecretError(err);
      if (error.code === 'JOB_IN_PROGRESS')
        return {
          kind: 'job-running',
          ...jobBase,
          jobName: pullSecretJobName(work.clusterId, work.generation),
        };
      return { kind: 'failed', error, target: work.target };
    }
  }

  return {
    async execute(work: ClusterWork, signal: AbortSignal): Promise<WorkOutcome> {
      // As in-process: a Kubernetes error that quotes what it was sent must not carry the credentials.
      const release = redactor.register(credentialStrings(work.pullSecret));
      try {
        return await launchFor(work, signal);
      } finally {
        release();
      }
    },
    async finalize(cleanup: ClusterCleanup, signal: AbortSignal): Promise<WorkOutcome> {
      try {
        const removed = await launcher.removeClusterJobs(cleanup.clusterId, {
          namespace: job.namespace,
          signal,
        });
        if (removed.jobs > 0)
          cleanup.log.info(
            { operation: 'finalize', jobs: removed.jobs, data_secrets: removed.dataSecrets },
            "Removed the cluster's Jobs",
          );
        const secrets = await removeClusterSecrets(cleanup.target, resources, signal, cleanup.clusterId);
        return { kind: 'finalized', target: cleanup.target, ...secrets, jobs: removed.jobs };
      } catch (err) {
        return { kind: 'finalize-failed', target: cleanup.target, error: toPullSecretError(err) };
      }
    },
    async close() {
      // The launcher holds no connections between calls.
    },
  };
}

/**
 * A Job that failed on the registry verification (its pod's report says CREDENTIALS_REJECTED or
 * REGISTRY_UNREACHABLE) is reported as the in-process executor reports it: `Available=False` with
 * that reason, naming the registry, with the verification's results and the version still served.
 * Not retried by the event: the Job already retried its pods, and the same generation's Job would only
 * be read again; a new Job checks again once the finished one's TTL removed it, or at the next
 * generation.
 */
function verificationFailure(result: JobLaunchResult, target: WorkTarget): WorkOutcome | undefined {
  const code = result.report?.errorCode;
  if (
    result.report?.status !== 'failure' ||
    (code !== 'CREDENTIALS_REJECTED' && code !== 'REGISTRY_UNREACHABLE')
  )
    return undefined;
  // With what the Job found: the registry verification and the version still served (docs/verification.md).
  const { registryVerification: verification, currentVersion: servedVersion } = result.report;
  const error = new PullSecretError(code, result.report.message, { retryable: false });
  return {
    kind: 'failed',
    error: toPullSecretError(withFacts(error, { verification, servedVersion })),
    target,
  };
}
