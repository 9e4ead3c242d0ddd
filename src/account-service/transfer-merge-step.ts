import { mergeTransferredPullSecret } from '../pullsecret/transfer-merge.js';
import type { ReconcileStep } from '../reconcile/steps.js';
import { readTransferRecord } from './transfer-record.js';

/**
 * The reconcile step of ownership transfers (registered when an account service is configured: no
 * record can exist otherwise): reads the applied-transfer record beside the secret
 * (`readTransferRecord`, one store access) and pushes the spec merged with it, so a spec reconcile
 * never undoes an applied transfer.
 */
export const transferMergeStep: ReconcileStep = Object.freeze({
  async preparePayload(ctx, payload) {
    const applied = await readTransferRecord(ctx.store, ctx.names.secretId, ctx.signal);
    if (applied === undefined) return { payload };
    ctx.registerCredentials(applied.secret);
    const merged = mergeTransferredPullSecret(payload, applied.secret, ctx.limits);
    ctx.log.info(
      {
        operation: 'transfer-merge',
        transfer_id: applied.transferId,
        replaced: merged.replaced,
        added: merged.added,
      },
      'Applied transfer merged into the pull secret',
    );
    return {
      payload: merged.changed ? merged.data : payload,
      facts: { transfer: { transferId: applied.transferId, appliedAt: applied.appliedAt } },
    };
  },
} satisfies ReconcileStep);

/** `steps` with the transfer merge first (a transfer check's reconcile), unless it is there already. */
export function withTransferMerge(steps: readonly ReconcileStep[] = []): readonly ReconcileStep[] {
  return steps.includes(transferMergeStep) ? steps : [transferMergeStep, ...steps];
}
