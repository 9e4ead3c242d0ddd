import { toPullSecretError } from '../errors/index.js';
import { reconcilePullSecret } from '../reconcile/reconcile-pull-secret.js';
import type { RetentionRunner } from '../retention/runner.js';
import type { RetryPolicy } from '../util/retry.js';
import type { VerificationGate } from '../verification/index.js';
import type { ClusterCleanup, ClusterWork, Executor } from '../reconcile/executor.js';
import type { WorkOutcome } from '../reconcile/outcome.js';
import { removeClusterSecrets, storeFor, type ClusterResources } from './secret-cleanup.js';

/** What an adapter user sets to choose another cloud secret name (named in the refusal of an unmanaged secret). */
const ADAPTER_SECRET_NAME_SETTING = 'spec.pullSecret.secretName';

/** In-process execution: `reconcilePullSecret` with a shared store client per project. */
export class InProcessExecutor implements Executor {
  /** `transferRecords`: merge an applied ownership transfer into the spec (set when an account service is configured). */
  /** `verification`: registry verification of new pull secrets (`verification.mode` warn or enforce). `retention`: retires superseded versions (docs/retention.md). */
  constructor(
    private readonly deps: {
      resources: ClusterResources;
      retry: RetryPolicy;
      transferRecords?: boolean;
      verification?: VerificationGate;
      retention?: RetentionRunner;
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
        },
        {
          store,
          kubernetes,
          retry: this.deps.retry,
          log: work.log,
          signal,
          transferRecords: this.deps.transferRecords,
          verification: this.deps.verification,
          retention: this.deps.retention,
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
      // The cluster is gone: its retention due time need not be kept.
      if (this.deps.retention !== undefined)
        this.deps.retention.forget(
          await storeFor(this.deps.resources.stores, cleanup.target),
          cleanup.target.secretName,
        );
      return { kind: 'finalized', target: cleanup.target, ...removed };
    } catch (err) {
      return { kind: 'finalize-failed', target: cleanup.target, error: toPullSecretError(err) };
    }
  }

  async close(): Promise<void> {
    // Stores and targets are owned by the service, which closes them.
  }
}
