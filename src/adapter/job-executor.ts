import { toPullSecretError } from '../errors/index.js';
import type { Logger } from '../observability/logger.js';
import { assertClusterId, assertSecretId } from '../pullsecret/identifiers.js';
import { validatePullSecret } from '../pullsecret/validate.js';
import { projectJobEnv } from '../config/env-table.js';
import { storeFactory } from '../stores/registry.js';
import type { AdapterConfig } from './config.js';
import type { ClusterWork, Executor } from './in-process-executor.js';
import type { WorkOutcome } from './outcome.js';

/**
 * The job's environment for one cluster: a projection of the adapter's own configuration (the one
 * model of `src/config/`), with the store's scope (GCP project) from the cluster.
 */
export function storeSettingsEnv(config: AdapterConfig, scope: string | undefined): Record<string, string> {
  return projectJobEnv(config, config.store.type, scope);
}

/**
 * Kubernetes Job execution (design §1): each cluster's work runs as `pull-secret run-job
 * pull-secret` in the Job `pullsecret-{id}-gen{generation}`. Input errors are caught here first
 * (no Job for a pull secret that can never work); a Job still running when `waitSeconds` pass is
 * reported as in progress and found again, by its generation, on the next event.
 */
export async function createJobExecutor(config: AdapterConfig, logger: Logger): Promise<Executor> {
  const { createPullSecretJobLauncher } = await import('../kube/job-launcher.js');
  const launcher = createPullSecretJobLauncher({ kubeconfigPath: config.kubernetes.kubeconfig, logger });
  const job = config.execution.job;
  // The store's per-version limit, checked before a Job is launched.
  const maxBytes = storeFactory(config.store.type).maxPayloadBytes;
  return {
    async execute(work: ClusterWork, signal: AbortSignal): Promise<WorkOutcome> {
      const jobBase = { target: work.target, jobNamespace: job.namespace };
      try {
        assertClusterId(work.clusterId);
        assertSecretId(work.target.secretName);
        validatePullSecret(work.pullSecret, { maxBytes, targetName: `${config.store.type} store` });
        const env = { ...storeSettingsEnv(config, work.target.projectId), SECRET_NAME: work.target.secretName };
        const result = await launcher.launch(
          {
            clusterId: work.clusterId,
            generation: work.generation,
            pullSecret: Buffer.from(work.pullSecret),
            env,
            image: job.image,
            namespace: job.namespace,
            activeDeadlineSeconds: job.timeoutSeconds,
            kubernetesSecret: config.kubernetes.target === 'api' ? { namespace: work.target.namespace } : undefined,
          },
          { signal, timeoutMs: job.waitSeconds * 1000 },
        );
        return result.outcome === 'succeeded'
          ? { kind: 'job-succeeded', ...jobBase, jobName: result.jobName }
          : { kind: 'job-failed', ...jobBase, jobName: result.jobName, message: `${result.result.reason}: ${result.message}` };
      } catch (err) {
        const error = toPullSecretError(err);
        if (error.code === 'JOB_IN_PROGRESS') return { kind: 'job-running', ...jobBase, jobName: `pullsecret-${work.clusterId}-gen${work.generation}` };
        return { kind: 'failed', error, target: work.target };
      }
    },
    async close() {
      // The launcher holds no connections between calls.
    },
  };
}
