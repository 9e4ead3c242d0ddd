import { z } from 'zod';
import { DEFAULT_MANIFEST_DIR, managementNamespaceSchema } from '../config/kubernetes-env.js';
import { KUBERNETES_TARGET_KINDS } from './target-config.js';

/**
 * The Kubernetes section the job and the adapter share (`KUBERNETES_TARGET`, `MANIFEST_DIR`,
 * `KUBECONFIG_PATH`): one schema and one set of defaults. Nothing here loads the client.
 */

const kubernetesShape = {
  target: z
    .enum(KUBERNETES_TARGET_KINDS, { message: `must be one of ${KUBERNETES_TARGET_KINDS.join(', ')}` })
    .optional(),
  manifestDir: z.string().min(1).default(DEFAULT_MANIFEST_DIR),
  kubeconfig: z.string().min(1).optional(),
};

/**
 * Where the Kubernetes Secret goes. `target` unset means `none`, or `api` when a management
 * namespace is given (only the job has one: the adapter takes it from each cluster); the same rule
 * for job and adapter.
 */
export const kubernetesSectionSchema = z
  .object(kubernetesShape)
  .strict()
  .transform((k) => ({ ...k, target: k.target ?? ('none' as const) }));

/** The job's Kubernetes section: the shared one plus the management namespace. */
export const jobKubernetesSectionSchema = z
  .object({ ...kubernetesShape, namespace: managementNamespaceSchema.optional() })
  .strict()
  .transform((k) => ({
    ...k,
    target: k.target ?? (k.namespace !== undefined ? ('api' as const) : ('none' as const)),
  }));
