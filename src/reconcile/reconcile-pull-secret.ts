import { readTransferRecord } from '../account-service/transfer-record.js';
import type { Logger } from '../observability/logger.js';
import { mergeTransferredPullSecret } from '../pullsecret/transfer-merge.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { deriveClusterNames } from '../pullsecret/cluster-names.js';
import { redactor } from '../pullsecret/redact.js';
import { validatePullSecret } from '../pullsecret/validate.js';
import { pushSecret, type PushResult } from '../stores/push.js';
import type { SecretStore } from '../stores/store.js';
import type { ApplyResult, KubernetesSecretTarget } from '../kube/target.js';
import type { RetryPolicy } from '../util/retry.js';
import type { VerificationGate, VerificationSummary } from '../verification/index.js';
import { provisionKubernetesSecret } from './provision-kubernetes.js';
import type { RetentionRunner, RetentionView } from '../retention/runner.js';

/** One cluster's desired pull secret. */
export interface ReconcileInput {
  clusterId: string;
  /** Cloud secret id; default `hyperfleet-{cluster-id}-pull-secret`. */
  secretName?: string;
  /** The pull secret document as given (a credential: never logged). */
  pullSecretData: string;
  /** Namespace of the Kubernetes Secret; default `clusters-{cluster-id}`. */
  namespace?: string;
  dryRun?: boolean;
  /** The setting that names the secret, for messages: `SECRET_NAME` (default) or `spec.pullSecret.secretName`. */
  secretNameSetting?: string;
}

export interface ReconcileDeps {
  store: SecretStore;
  /** Where the Kubernetes Secret goes; none = store step only. */
  kubernetes?: KubernetesSecretTarget;
  retry: RetryPolicy;
  log: Logger;
  signal?: AbortSignal;
  /**
   * Read the applied-transfer record beside the secret (`readTransferRecord`, one store access) and
   * push the spec merged with it, so a spec reconcile never undoes an applied transfer. Set only
   * when an account service is configured: no record can exist otherwise.
   */
  transferRecords?: boolean;
  /** Retires superseded versions after the push (docs/retention.md); none = versions are kept. */
  retention?: RetentionRunner;
  /**
   * Registry verification (`verification.mode` warn or enforce): checks the credentials only when
   * a new pull secret would be promoted; in enforce mode a refusal stops the reconcile before any write.
   */
  verification?: VerificationGate;
}

/** What a reconcile did. */
export interface ReconcileResult extends PushResult {
  secretName: string;
  dryRun: boolean;
  kubernetes?: ApplyResult;
  /** The applied transfer merged into the spec's pull secret, when a record exists. */
  transfer?: { transferId: string; appliedAt: string };
  /** The current and previous versions, when retention runs for this store. */
  retention?: RetentionView;
  /** The registry verification of the new pull secret; absent when off or nothing new was promoted. */
  verification?: VerificationSummary;
}

/**
 * The unit of work shared by the job and the adapter's in-process executor: derive and check every
 * name (`deriveClusterNames`) and validate the pull secret against the store's limits, all before
 * the first store or Kubernetes call, store it idempotently (`pushSecret`), then
 * write the Kubernetes Secret from the bytes read back from the store. The input's credentials are
 * registered with the redactor before anything else, and released when the call ends (the adapter
 * handles thousands of clusters; the redactor must not keep them all).
 *
 * @throws PullSecretError IDENTIFIER_INVALID, PULL_SECRET_INVALID, PAYLOAD_TOO_LARGE, or what the
 *   store and target throw.
 */
export async function reconcilePullSecret(
  input: ReconcileInput,
  deps: ReconcileDeps,
): Promise<ReconcileResult> {
  const releases = [redactor.register(credentialStrings(input.pullSecretData))];
  try {
    return await reconcileRegistered(input, deps, releases);
  } finally {
    for (const release of releases) release();
  }
}

async function reconcileRegistered(
  input: ReconcileInput,
  deps: ReconcileDeps,
  releases: (() => void)[],
): Promise<ReconcileResult> {
  const dryRun = input.dryRun ?? false;
  const writesKubernetes = deps.kubernetes !== undefined && !dryRun;
  // Every name, and the document, are checked before the first store or Kubernetes call.
  const names = deriveClusterNames({
    clusterId: input.clusterId,
    secretName: input.secretName,
    namespace: input.namespace,
    kubernetes: writesKubernetes,
  });
  const { secretId: secretName, labels } = names;
  const { store, log } = deps;
  const limits = { maxBytes: store.maxPayloadBytes, targetName: `${store.kind} store` };
  const secret = validatePullSecret(input.pullSecretData, limits);
  // The steps of a reconcile are debug; its outcome ('Pull secret reconciled') and every write are info.
  log.debug({ operation: 'validate', registries: secret.registries }, 'Pull secret is valid');
  const applied =
    deps.transferRecords === true ? await readTransferRecord(store, secretName, deps.signal) : undefined;
  let payload = secret.raw;
  if (applied !== undefined) {
    // Registered like the input: released when this reconcile ends.
    releases.push(redactor.register(credentialStrings(applied.secret)));
    const merged = mergeTransferredPullSecret(secret.raw, applied.secret, limits);
    if (merged.changed) payload = merged.data;
    log.info(
      {
        operation: 'transfer-merge',
        transfer_id: applied.transferId,
        replaced: merged.replaced,
        added: merged.added,
      },
      'Applied transfer merged into the pull secret',
    );
  }

  let verification: VerificationSummary | undefined;
  const gate = deps.verification;
  const beforeWrite =
    gate === undefined
      ? undefined
      : async () => void (verification = await gate.check(payload.toString('utf8'), log, deps.signal));
  const pushed = await pushSecret(
    store,
    {
      secretId: secretName,
      labels: { ...labels },
      payload,
      dryRun,
      secretNameSetting: input.secretNameSetting,
      beforeWrite,
    },
    {
      retry: deps.retry,
      signal: deps.signal,
      onEvent: ({ level, message, ...fields }) => log[level ?? 'info'](fields, message),
    },
  );
  const result: ReconcileResult = { ...pushed, secretName, dryRun };
  if (applied !== undefined)
    result.transfer = { transferId: applied.transferId, appliedAt: applied.appliedAt };
  if (verification !== undefined) result.verification = verification;
  if (
    deps.kubernetes !== undefined &&
    writesKubernetes &&
    pushed.stored !== undefined &&
    pushed.version !== undefined
  ) {
    result.kubernetes = await provisionKubernetesSecret(
      deps.kubernetes,
      {
        clusterId: names.clusterId,
        namespace: names.namespace,
        stored: pushed.stored,
        secretPath: pushed.secretPath,
        version: pushed.version,
        // The store gave back the validated bytes (the usual case): their parse is reused, not repeated.
        parsed:
          payload === secret.raw && pushed.stored.equals(secret.raw) ? { value: secret.document } : undefined,
        // Derived above with the Kubernetes checks (writesKubernetes): not derived again for the manifest.
        names,
      },
      log,
      deps.signal,
    );
  }
  if (deps.retention !== undefined && !dryRun && pushed.version !== undefined) {
    // After the Kubernetes Secret holds the new content: the old credential is retired only later.
    const view = await deps.retention.afterReconcile(
      store,
      {
        secretId: secretName,
        clusterId: names.clusterId,
        currentVersion: pushed.version,
        wrote: pushed.outcome !== 'unchanged',
      },
      log,
      deps.signal,
    );
    if (view !== undefined) result.retention = view;
  }
  return result;
}
