/*
 * The retention plug-in (docs/retention.md). Registers one reconcile step, `retentionStep`
 * (`afterProvision`: retire superseded versions; `onFinalize`: forget a deleted cluster), wired by
 * the adapter and the Job in one line each. Rollback (rollback.ts) is the admin API's.
 */
import type { ReconcileStep } from '../reconcile/steps.js';
import type { RetentionRunner } from './runner.js';

/**
 * The reconcile step of retention (docs/retention.md): after the Kubernetes Secret holds the new
 * content, retires superseded versions (`RetentionRunner.afterReconcile`), and forgets a deleted
 * cluster's due time. A dry run retires nothing.
 */
export function retentionStep(runner: RetentionRunner): ReconcileStep {
  return Object.freeze({
    async afterProvision(ctx, pushed) {
      if (ctx.dryRun || pushed.version === undefined) return undefined;
      const view = await runner.afterReconcile(
        ctx.store,
        {
          secretId: ctx.names.secretId,
          clusterId: ctx.names.clusterId,
          currentVersion: pushed.version,
          wrote: pushed.outcome !== 'unchanged',
        },
        ctx.log,
        ctx.signal,
      );
      return view === undefined ? undefined : { retention: view };
    },
    onFinalize(store, secretId) {
      runner.forget(store, secretId);
    },
  } satisfies ReconcileStep);
}
