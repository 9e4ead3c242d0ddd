import { toPullSecretError } from '../errors/index.js';
import type { KubernetesSecretTarget } from '../kube/target.js';
import type { Logger } from '../observability/logger.js';
import { isManaged } from '../pullsecret/identifiers.js';
import { reconcilePullSecret } from '../reconcile/reconcile-pull-secret.js';
import type { RetryPolicy } from '../util/retry.js';
import type { WorkOutcome, WorkTarget } from './outcome.js';
import type { StoreProvider } from './store-provider.js';

/** One cluster to work on, with its inputs already read. */
export interface ClusterWork {
  clusterId: string;
  generation: number;
  target: WorkTarget;
  /** The pull secret text (a credential). */
  pullSecret: string;
  log: Logger;
}

/** Runs the work of one cluster somewhere: in this process, or as a Kubernetes Job. */
export interface Executor {
  /** Stores and provisions the pull secret. Never throws: failures become a `failed` outcome. */
  execute(work: ClusterWork, signal: AbortSignal): Promise<WorkOutcome>;
  close(): Promise<void>;
}

export interface CleanupOptions {
  stores: StoreProvider;
  kubernetes?: KubernetesSecretTarget;
  /** What happens to the cloud secret when its cluster is deleted. */
  cloudSecretOnDelete: 'retain' | 'delete';
}

/** In-process execution: `reconcilePullSecret` with a shared store client per project. */
export class InProcessExecutor implements Executor {
  constructor(private readonly deps: { stores: StoreProvider; kubernetes?: KubernetesSecretTarget; retry: RetryPolicy }) {}

  async execute(work: ClusterWork, signal: AbortSignal): Promise<WorkOutcome> {
    try {
      const store = await this.deps.stores.forProject(work.target.projectId ?? '');
      const result = await reconcilePullSecret(
        { clusterId: work.clusterId, secretName: work.target.secretName, pullSecretData: work.pullSecret, namespace: work.target.namespace },
        { store, kubernetes: this.deps.kubernetes, retry: this.deps.retry, log: work.log, signal },
      );
      return { kind: 'applied', target: work.target, result };
    } catch (err) {
      return { kind: 'failed', error: toPullSecretError(err), target: work.target };
    }
  }

  async close(): Promise<void> {
    // Stores and targets are owned by the service, which closes them.
  }
}

/**
 * Cleanup for a deleted cluster (always in-process: it needs no pull secret): delete our
 * Kubernetes Secret, then retain or delete the cloud secret. Refuses to delete anything unmanaged.
 */
export async function finalizeCluster(target: WorkTarget, options: CleanupOptions, signal: AbortSignal): Promise<WorkOutcome> {
  try {
    const kubernetesRemoved = options.kubernetes ? await options.kubernetes.remove(target.namespace, target.kubernetesSecretName, { signal }) : false;
    // A cluster that never named a project never had a cloud secret.
    if (options.stores.projectScoped && !target.projectId) return { kind: 'finalized', target, kubernetesRemoved, cloud: 'absent' };
    const store = await options.stores.forProject(target.projectId ?? '');
    const existing = await store.getSecret(target.secretName, { signal });
    let cloud: 'retained' | 'deleted' | 'absent' = existing === undefined ? 'absent' : 'retained';
    if (existing !== undefined && options.cloudSecretOnDelete === 'delete' && isManaged(existing.labels)) {
      cloud = (await store.deleteSecret(target.secretName, { signal })) ? 'deleted' : 'absent';
    }
    return { kind: 'finalized', target, kubernetesRemoved, cloud };
  } catch (err) {
    return { kind: 'finalize-failed', target, error: toPullSecretError(err) };
  }
}
