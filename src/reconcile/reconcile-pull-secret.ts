import type { Logger } from '../observability/logger.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { deriveClusterNames, type ClusterNames } from '../pullsecret/cluster-names.js';
import { redactor } from '../pullsecret/redact.js';
import { validatePullSecret } from '../pullsecret/validate.js';
import { pushSecret, type PushResult } from '../stores/push.js';
import type { SecretStore } from '../stores/store.js';
import type { ApplyResult, KubernetesSecretTarget } from '../kube/target.js';
import type { RetryPolicy } from '../util/retry.js';
import { provisionKubernetesSecret } from './provision-kubernetes.js';
import { withFacts } from './failure-facts.js';
import type { ReconcileFacts, ReconcileStep, StepContext } from './steps.js';

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
  /**
   * The names the caller already derived (`deriveClusterNames`) from these same inputs, with the
   * Kubernetes checks when a Kubernetes Secret is written: not derived again.
   */
  names?: ClusterNames;
}

export interface ReconcileDeps {
  store: SecretStore;
  /** Where the Kubernetes Secret goes; none = store step only. */
  kubernetes?: KubernetesSecretTarget;
  retry: RetryPolicy;
  log: Logger;
  signal?: AbortSignal;
  /** The plug-in steps, in order (transfer merge, registry verification, retention): none = store and Secret only. */
  steps?: readonly ReconcileStep[];
}

/** What a reconcile did, with the facts its steps added. */
export interface ReconcileResult extends PushResult, ReconcileFacts {
  secretName: string;
  dryRun: boolean;
  kubernetes?: ApplyResult;
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
 *   store, target and steps throw, with the facts the steps gathered before (`factsOf`).
 */
export async function reconcilePullSecret(
  input: ReconcileInput,
  deps: ReconcileDeps,
): Promise<ReconcileResult> {
  const releases = [redactor.register(credentialStrings(input.pullSecretData))];
  // What the steps found, kept for a failure's report (`factsOf`): a throw would lose it otherwise.
  const facts: ReconcileFacts = {};
  try {
    return await reconcileRegistered(input, deps, releases, facts);
  } catch (err) {
    throw withFacts(err, facts);
  } finally {
    for (const release of releases) release();
  }
}

async function reconcileRegistered(
  input: ReconcileInput,
  deps: ReconcileDeps,
  releases: (() => void)[],
  facts: ReconcileFacts,
): Promise<ReconcileResult> {
  const dryRun = input.dryRun ?? false;
  const writesKubernetes = deps.kubernetes !== undefined && !dryRun;
  // Every name, and the document, are checked before the first store or Kubernetes call.
  const names =
    input.names ??
    deriveClusterNames({
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
  const steps = deps.steps ?? [];
  const ctx: StepContext = Object.freeze({
    store,
    names,
    spec: secret.raw,
    dryRun,
    limits,
    log,
    signal: deps.signal,
    // Registered like the input: released when this reconcile ends.
    registerCredentials: (document: string) =>
      void releases.push(redactor.register(credentialStrings(document))),
  });
  let payload = secret.raw;
  for (const step of steps) {
    if (step.preparePayload === undefined) continue;
    const prepared = await step.preparePayload(ctx, payload);
    payload = prepared.payload;
    Object.assign(facts, prepared.facts);
    if (prepared.final === true) break;
  }
  const gates = steps.filter((step) => step.beforeWrite !== undefined);
  const beforeWrite =
    gates.length === 0
      ? undefined
      : async (current: { version: string } | undefined) => {
          try {
            for (const step of gates) Object.assign(facts, await step.beforeWrite?.(ctx, payload));
          } catch (err) {
            // Refused before any write: the version the store holds is still the one served.
            throw withFacts(err, { servedVersion: current?.version });
          }
        };
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
  const result: ReconcileResult = { ...pushed, secretName, dryRun, ...facts };
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
  // After the Kubernetes Secret holds the new content: an old credential is retired only later.
  for (const step of steps) Object.assign(result, await step.afterProvision?.(ctx, pushed));
  return result;
}
