import type { SecretReadCache } from './secret-writer.js';
import type { KubernetesSecretTarget, TargetLogger } from './target.js';

/** Where the Kubernetes Secret goes: a real API server, a directory of manifests, or nowhere. */
export const KUBERNETES_TARGET_KINDS = ['api', 'manifests', 'none'] as const;
type KubernetesTargetKind = (typeof KUBERNETES_TARGET_KINDS)[number];

export interface KubernetesTargetConfig {
  target: KubernetesTargetKind;
  /** Namespace of the Secret; default `clusters-{cluster-id}`. */
  namespace?: string;
  manifestDir: string;
  /** Explicit kubeconfig; otherwise KUBECONFIG, in-cluster, or the default (see loadKubeConfig). */
  kubeconfigPath?: string;
}

/**
 * Builds the configured target; the API target reads through `cache` (the informer's) when given. The
 * API target loads `@kubernetes/client-node` lazily: it costs
 * about half a second and 100 MB to import, which a manifests-only run should not pay.
 * @throws CONFIG_INVALID when no kubeconfig can be loaded; Error for target `none`.
 */
export async function createKubernetesTarget(
  config: KubernetesTargetConfig,
  logger?: TargetLogger,
  cache?: SecretReadCache,
): Promise<KubernetesSecretTarget> {
  switch (config.target) {
    case 'manifests': {
      const { ManifestDirectoryTarget } = await import('./manifest-directory.js');
      return new ManifestDirectoryTarget({ directory: config.manifestDir });
    }
    case 'api': {
      const { createKubernetesSecretWriter } = await import('./secret-writer.js');
      return createKubernetesSecretWriter({ kubeconfigPath: config.kubeconfigPath, logger, cache });
    }
    case 'none':
      throw new Error('no Kubernetes target is configured');
  }
}
