import { toPullSecretError } from '../errors/index.js';
import { reconcilePullSecret } from '../reconcile/reconcile-pull-secret.js';
import type { ReconcileStep } from '../reconcile/steps.js';
import type { RetryPolicy } from '../util/retry.js';
import type { ClusterCleanup, ClusterWork, Executor } from '../reconcile/executor.js';
import type { WorkOutcome } from '../reconcile/outcome.js';
import { removeClusterSecrets, storeFor, type ClusterResources } from './secret-cleanup.js';

/** What an adapter user sets to choose another cloud secret name (named in the refusal of an unmanaged secret). */
const ADAPTER_SECRET_NAME_SETTING = 'spec.pullSecret.secretName';

/** In-process execution: `reconcilePullSecret` with a shared store client per project. */
export class InProcessExecutor implements Executor {
  /** `steps`: the reconcile's plug-in steps in order (transfer merge, registry verification, retention). */
  constructor(
    private readonly deps: {
      resources: ClusterResources;
      retry: RetryPolicy;
      steps?: readonly ReconcileStep[];
    },
  ) {}

  async execute(work: ClusterWork, signal: AbortSignal): Promise<WorkOutcome> {
    try {
      const { stores, kubernetes } = this.deps.resources;
      const store = await storeFor(stores, work.target);
      const result = await reconcilePullSecret(
        {
          clusterId: work.clusterId,
          secretName: work.target.secretName,
          pullSecretData: work.pullSecret,
          namespace: work.target.namespace,
          secretNameSetting: ADAPTER_SECRET_NAME_SETTING,
          names: work.names,
        },
        {
          store,
          kubernetes,
          retry: this.deps.retry,
          log: work.log,
          signal,
          steps: this.deps.steps,
        },
      );
      return { kind: 'applied', target: work.target, result };
    } catch (err) {
      return { kind: 'failed', error: toPullSecretError(err), target: work.target };
    }
  }

  /** Deletes the Kubernetes Secret, then retains or deletes the cloud secret (`removeClusterSecrets`). */
  async finalize(cleanup: ClusterCleanup, signal: AbortSignal): Promise<WorkOutcome> {
    try {
      const removed = await removeClusterSecrets(
        cleanup.target,
        this.deps.resources,
        signal,
        cleanup.clusterId,
      );
      // The cluster is gone: what steps keep of it (retention's due time) need not be kept.
      const finalizers = (this.deps.steps ?? []).filter((step) => step.onFinalize !== undefined);
      if (finalizers.length > 0) {
        const store = await storeFor(this.deps.resources.stores, cleanup.target);
        for (const step of finalizers) step.onFinalize?.(store, cleanup.target.secretName);
      }
      return { kind: 'finalized', target: cleanup.target, ...removed };
    } catch (err) {
      return { kind: 'finalize-failed', target: cleanup.target, error: toPullSecretError(err) };
    }
  }

  async close(): Promise<void> {
    // Stores and targets are owned by the service, which closes them.
  }
}
