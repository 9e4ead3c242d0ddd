import type { Logger } from '../observability/logger.js';
import { buildPullSecretManifest } from '../kube/pull-secret-manifest.js';
import type { ClusterNames } from '../pullsecret/cluster-names.js';
import type { ApplyResult, KubernetesSecretTarget } from '../kube/target.js';

/** What the Kubernetes step needs from the store step. */
interface ProvisionInput {
  clusterId: string;
  /** Namespace of the Secret; default `clusters-{cluster-id}`. */
  namespace?: string;
  /** The bytes read back from the store (the Secret is filled from what the store holds, not from the input). */
  stored: Buffer;
  secretPath: string;
  version: string;
  /** The strict parser's value of exactly `stored`, when the caller has it (see `buildPullSecretManifest`). */
  parsed?: { value: unknown };
  /** The names the caller derived for this cluster and namespace (see `buildPullSecretManifest`). */
  names?: ClusterNames;
}

/**
 * Writes the cluster's `kubernetes.io/dockerconfigjson` Secret into `target` (API server or
 * manifest directory) with the store's bytes; `unchanged` makes no write.
 * @throws PullSecretError from the target (SECRET_UNMANAGED, NAMESPACE_NOT_FOUND, KUBE_*).
 */
export async function provisionKubernetesSecret(
  target: KubernetesSecretTarget,
  input: ProvisionInput,
  log: Logger,
  signal?: AbortSignal,
): Promise<ApplyResult> {
  const started = performance.now();
  const manifest = buildPullSecretManifest({
    clusterId: input.clusterId,
    pullSecret: input.stored,
    namespace: input.namespace,
    secretPath: input.secretPath,
    secretVersion: input.version,
    parsed: input.parsed,
    names: input.names,
  });
  const result = await target.apply(manifest, { signal });
  // A Secret already up to date is a step of a no-op (debug); a write is info.
  log[result.outcome === 'unchanged' ? 'debug' : 'info'](
    {
      operation: 'provision-kubernetes-secret',
      kubernetes_target: target.kind,
      namespace: result.namespace,
      kubernetes_secret: result.name,
      outcome: result.outcome,
      duration_ms: Math.round(performance.now() - started),
    },
    result.outcome === 'unchanged' ? 'Kubernetes Secret already up to date' : 'Kubernetes Secret written',
  );
  return result;
}
