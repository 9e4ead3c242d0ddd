import { z } from 'zod';

/**
 * Where the adapter finds its inputs in a cluster object. Each entry lists dotted paths tried in
 * order; the first one present wins, so both `spec.gcp.projectId` (the original cluster spec) and
 * `spec.platform.gcp.projectID` (current API) work without configuration.
 */
export const fieldPathsSchema = z
  .object({
    provider: z.array(z.string().min(1)).default(['spec.provider', 'spec.platform.type']),
    projectId: z
      .array(z.string().min(1))
      .default(['spec.gcp.projectId', 'spec.platform.gcp.projectID', 'spec.platform.gcp.projectId']),
    pullSecret: z.array(z.string().min(1)).default(['spec.pullSecret.data']),
    secretName: z.array(z.string().min(1)).default(['spec.pullSecret.secretName']),
    namespace: z.array(z.string().min(1)).default([]),
  })
  .strict();

export type FieldPaths = z.infer<typeof fieldPathsSchema>;

/** The inputs of one reconcile, read from the cluster. Never logged whole: `pullSecret` is a credential. */
export interface ClusterParams {
  provider: string;
  projectId: string;
  /** The pull secret document as text, or undefined when the cluster has none. */
  pullSecret?: string;
  secretName?: string;
  namespace?: string;
}

function lookup(root: unknown, path: string): unknown {
  let node = root;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** The value at the first of `paths` present in `root` (not undefined, null or ""). */
export function first(root: unknown, paths: readonly string[]): unknown {
  for (const path of paths) {
    const value = lookup(root, path);
    if (value !== undefined && value !== null && value !== '') return value;
  }
  return undefined;
}

const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * Reads the reconcile inputs from a cluster object. A pull secret given as a JSON object (rather
 * than a string) is serialized, so both spellings of the API work.
 */
export function readClusterParams(cluster: unknown, paths: FieldPaths): ClusterParams {
  const secret = first(cluster, paths.pullSecret);
  return {
    provider: asString(first(cluster, paths.provider)) ?? '',
    projectId: asString(first(cluster, paths.projectId)) ?? '',
    pullSecret:
      typeof secret === 'string'
        ? secret
        : secret !== undefined && typeof secret === 'object'
          ? JSON.stringify(secret)
          : undefined,
    secretName: asString(first(cluster, paths.secretName)),
    namespace: asString(first(cluster, paths.namespace)),
  };
}
