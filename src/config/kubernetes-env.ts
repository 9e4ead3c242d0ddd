import { z } from 'zod';
import type { EnvMapping } from './env.js';

/**
 * The Kubernetes target's settings as configuration sees them (the target itself is src/kube's): its
 * variables and their defaults, read the same by the job and the adapter.
 */

/** Default directory of the manifest-directory target (relative to the working directory). */
export const DEFAULT_MANIFEST_DIR = '.pull-secret/manifests';

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

/** The target's variables (`parseEnv` mapping); the env table lists them with the others. */
export const KUBERNETES_TARGET_ENV = {
  KUBERNETES_TARGET: {
    key: 'target',
    help:
      'Also write the Kubernetes Secret: api | manifests | none (default none, or api when ' +
      'MANAGEMENT_NAMESPACE is set).',
  },
  MANAGEMENT_NAMESPACE: {
    key: 'namespace',
    help: 'Namespace of the Kubernetes Secret (default clusters-{CLUSTER_ID}).',
  },
  MANIFEST_DIR: {
    key: 'manifestDir',
    help:
      `Directory for KUBERNETES_TARGET=manifests (default ${DEFAULT_MANIFEST_DIR}). The API target ` +
      `reads KUBECONFIG, or the in-cluster service account.`,
  },
} as const satisfies EnvMapping;
