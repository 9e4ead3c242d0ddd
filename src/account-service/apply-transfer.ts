import { toPullSecretError } from '../errors/index.js';
import { deriveClusterNames } from '../pullsecret/cluster-names.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { redactor } from '../pullsecret/redact.js';
import {
  reconcilePullSecret,
  type ReconcileDeps,
  type ReconcileInput,
  type ReconcileResult,
} from '../reconcile/reconcile-pull-secret.js';
import type { SecretStore } from '../stores/store.js';
import {
  applyTransfer,
  checkTransfer,
  TRANSFER_REASONS,
  type TransferCheckOptions,
  type TransferOutcome,
} from './transfer-check.js';
import { writeTransferRecord } from './transfer-record.js';
import { withTransferMerge } from './transfer-merge-step.js';

/** What one cluster's transfer check did, and the reconcile it ran when it applied one. */
export interface ClusterTransferResult {
  outcome: TransferOutcome;
  /** The reconcile that applied the transfer (only on `updated`). */
  reconcile?: ReconcileResult;
}

export interface ClusterTransferDeps extends ReconcileDeps {
  /** The check's client, interval, retries (limits come from the store). */
  check: Omit<TransferCheckOptions, 'limits' | 'signal'>;
  /** Clock for `appliedAt` (tests). */
  now?: () => Date;
}

/**
 * The cluster's current pull secret for the check: the newest enabled version in the store (what the
 * cluster uses), or the spec's when the store holds none yet. One store access.
 */
async function currentPullSecret(
  store: SecretStore,
  secretId: string,
  spec: string,
  signal?: AbortSignal,
): Promise<Buffer> {
  try {
    const latest = await store.accessLatestEnabled(secretId, { signal, skipExistenceCheck: true });
    if (latest !== undefined) return latest.data;
  } catch (err) {
    if (toPullSecretError(err).code !== 'SECRET_NOT_FOUND') throw err;
  }
  return Buffer.from(spec, 'utf8');
}

/**
 * Checks one cluster's accepted ownership transfer (`checkTransfer`) and, on `update`, applies it
 * through the cluster's normal reconcile: first the durable record `{transferId, appliedAt, secret}`
 * beside the cluster's secret (`writeTransferRecord`), then `reconcilePullSecret` from the spec
 * with the transfer merge step, which merges the record into the spec. So the store gets a new version
 * only when the merged content differs, the Kubernetes Secret is updated in place (same name), and
 * every later spec reconcile merges the same record again.
 *
 * Calls: the store's newest version (1 access), the account service (1 request, plus retries of 5xx
 * by `transferBackoff`); on `update` the record push and the reconcile's own calls (+1 access for
 * the record). A record written whose reconcile then fails is picked up by the next reconcile.
 *
 * Never throws except ABORTED and store errors reading the current pull secret; a failed write is
 * the `update-failed` outcome.
 */
export async function checkAndApplyClusterTransfer(
  cluster: ReconcileInput,
  deps: ClusterTransferDeps,
): Promise<ClusterTransferResult> {
  const names =
    cluster.names ??
    deriveClusterNames({
      clusterId: cluster.clusterId,
      secretName: cluster.secretName,
      namespace: cluster.namespace,
      kubernetes: deps.kubernetes !== undefined,
    });
  const { store, signal } = deps;
  const limits = { maxBytes: store.maxPayloadBytes, targetName: `${store.kind} store` };
  const current = await currentPullSecret(store, names.secretId, cluster.pullSecretData, signal);
  const decision = await checkTransfer(names.clusterId, current, { ...deps.check, limits, signal });
  const appliedAt = (deps.now ?? (() => new Date()))();
  let reconcile: ReconcileResult | undefined;
  const outcome = await applyTransfer(
    decision,
    async () => {
      if (decision.kind !== 'update') return;
      const release = redactor.register(credentialStrings(decision.transferred));
      try {
        await writeTransferRecord(
          store,
          names,
          {
            transferId: decision.transferId,
            appliedAt: appliedAt.toISOString(),
            secret: decision.transferred,
          },
          { retry: deps.retry, signal },
        );
        reconcile = await reconcilePullSecret(cluster, { ...deps, steps: withTransferMerge(deps.steps) });
      } finally {
        release();
      }
    },
    () => appliedAt,
  );
  const { reason, label } = TRANSFER_REASONS[outcome.kind];
  deps.log.info(
    {
      operation: 'transfer-check',
      outcome: outcome.kind,
      reason,
      label,
      ...('transferId' in outcome ? { transfer_id: outcome.transferId } : {}),
      ...('credentials' in outcome ? { credentials: outcome.credentials } : {}),
    },
    'Transfer check done',
  );
  return reconcile === undefined ? { outcome } : { outcome, reconcile };
}
