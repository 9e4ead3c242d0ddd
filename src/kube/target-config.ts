import { z } from 'zod';
import type { EnvMapping } from '../config/env.js';
import type { SecretReadCache } from './secret-writer.js';
import type { KubernetesSecretTarget, TargetLogger } from './target.js';

/** Default directory of the manifest-directory target (relative to the working directory). */
export const DEFAULT_MANIFEST_DIR = '.pull-secret/manifests';

/** Where the Kubernetes Secret goes: a real API server, a directory of manifests, or nowhere. */
export const KUBERNETES_TARGET_KINDS = ['api', 'manifests', 'none'] as const;
export type KubernetesTargetKind = (typeof KUBERNETES_TARGET_KINDS)[number];

export interface KubernetesTargetConfig {
  target: KubernetesTargetKind;
  /** Namespace of the Secret; default `clusters-{cluster-id}`. */
  namespace?: string;
  manifestDir: string;
  /** Explicit kubeconfig; otherwise KUBECONFIG, in-cluster, or the default (see loadKubeConfig). */
  kubeconfigPath?: string;
}

/**
 * The management namespace a job is given (`MANAGEMENT_NAMESPACE`): a DNS-1123 label, checked when
 * the configuration is read, not when the first Secret is written (after a store write).
 */
export const managementNamespaceSchema = z
  .string()
  .max(63, 'must be a DNS-1123 label of at most 63 characters')
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    'must be a DNS-1123 label: lowercase letters, digits or "-", starting and ending with a letter or digit',
  );

export const KUBERNETES_TARGET_ENV = {
  KUBERNETES_TARGET: {
    key: 'target',
    help: 'Also write the Kubernetes Secret: api | manifests | none (default none, or api when MANAGEMENT_NAMESPACE is set).',
  },
  MANAGEMENT_NAMESPACE: {
    key: 'namespace',
    help: 'Namespace of the Kubernetes Secret (default clusters-{CLUSTER_ID}).',
  },
  MANIFEST_DIR: {
    key: 'manifestDir',
    help: `Directory for KUBERNETES_TARGET=manifests (default ${DEFAULT_MANIFEST_DIR}). The API target reads KUBECONFIG, or the in-cluster service account.`,
  },
} as const satisfies EnvMapping;

/**
 * Builds the configured target; the API target reads through `cache` (the informer's) when given. The API target loads `@kubernetes/client-node` lazily: it costs
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
