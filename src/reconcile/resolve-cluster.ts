import { describeError, PullSecretError, toPullSecretError } from '../errors/index.js';
import type { Cluster } from '../hyperfleet/index.js';
import type { Logger } from '../observability/logger.js';
import { deriveClusterNames, type ClusterNames } from '../pullsecret/cluster-names.js';
import { readClusterParams, type ClusterParams, type FieldPaths } from './cluster-params.js';
import type { WorkTarget } from './outcome.js';
import type { PullSecretSource } from './pipeline-plugin.js';
import type { PreconditionVerdict } from './preconditions.js';
import type { ClusterRoute, ProviderRoutes } from './provider-routes.js';

/** What resolving a cluster needs: the adapter's routes, field paths and target. */
export interface ResolveDeps {
  /** Which store serves each cluster, and the preconditions of its provider. */
  routes: ProviderRoutes;
  fieldPaths: FieldPaths;
  /** True when a Kubernetes Secret is written (its namespace and name are then checked up front). */
  writesKubernetes: boolean;
  /** `pullSecretSource: account-service`: reads the cluster's pull secret instead of the spec's. */
  pullSecretSource?: PullSecretSource;
}

/**
 * One cluster resolved once, frozen: its parameters, the store route, every name (checked by
 * `deriveClusterNames`, with the Kubernetes checks when a Secret is written) and the target they
 * make. Every later step receives it; nothing derives the names again.
 */
export interface ResolvedCluster {
  readonly cluster: Cluster;
  readonly params: ClusterParams;
  readonly route: ClusterRoute;
  readonly names: ClusterNames;
  readonly target: WorkTarget;
}

/** A resolved cluster, or why it cannot be. */
type Resolution =
  | { kind: 'resolved'; resolved: ResolvedCluster }
  /** No store serves the cluster's provider: nothing was ever written for it. */
  | { kind: 'unroutable'; message: string }
  /** A name is unusable (IDENTIFIER_INVALID); a deleted cluster has even its default names unusable. */
  | { kind: 'names-invalid'; error: PullSecretError };

/**
 * Resolves a cluster read from the API. A deleted cluster whose current spec names something
 * unusable resolves to its default names: an earlier generation may have written under them, so
 * those are cleaned up rather than nothing. Pure, no I/O; never throws.
 */
export function resolveCluster(cluster: Cluster, deps: ResolveDeps): Resolution {
  const params = readClusterParams(cluster, deps.fieldPaths);
  const route = deps.routes.route(cluster, params.provider);
  if (route === undefined)
    return { kind: 'unroutable', message: deps.routes.unmappedMessage(params.provider) };
  let names: ClusterNames;
  try {
    names = deriveClusterNames({
      clusterId: cluster.id,
      secretName: params.secretName,
      namespace: params.namespace,
      kubernetes: deps.writesKubernetes,
    });
  } catch (err) {
    const error = toPullSecretError(err);
    if (cluster.deleted_time === undefined) return { kind: 'names-invalid', error };
    try {
      names = deriveClusterNames({ clusterId: cluster.id, kubernetes: deps.writesKubernetes });
    } catch {
      return { kind: 'names-invalid', error };
    }
  }
  const target: WorkTarget = {
    store: route.store,
    provider: route.provider,
    settings: route.settings,
    secretName: names.secretId,
    namespace: names.namespace,
    kubernetesSecretName: names.kubernetesSecretName,
  };
  return { kind: 'resolved', resolved: Object.freeze({ cluster, params, route, names, target }) };
}

/**
 * The provider's preconditions on a resolved cluster. With a pull secret source, `hasPullSecret`
 * means the source can serve the cluster. @throws PullSecretError when a rule cannot be evaluated
 */
export function checkPreconditions(resolved: ResolvedCluster, deps: ResolveDeps): PreconditionVerdict {
  const { cluster, params, route } = resolved;
  const source = deps.pullSecretSource;
  const seen =
    source === undefined
      ? params
      : { ...params, pullSecret: source.has(cluster) ? '(from the account service)' : undefined };
  return deps.routes.evaluate(route, cluster, seen);
}

/**
 * The cluster's pull secret text: `spec.pullSecret.data` (the `pullSecret` field paths), or the
 * account service's for the cluster's organization (`pullSecretSource: account-service`).
 * @returns the error to report when there is none or the source failed (never throws)
 */
export async function readPullSecret(
  resolved: ResolvedCluster,
  deps: ResolveDeps,
  log: Logger,
  signal: AbortSignal,
): Promise<string | PullSecretError> {
  const source = deps.pullSecretSource;
  if (source !== undefined) {
    try {
      return await source.read(resolved.cluster, signal);
    } catch (err) {
      const error = toPullSecretError(err);
      log.warn(
        { operation: 'pull-secret-source', ...describeError(error) },
        'Could not read the pull secret from the account service',
      );
      return error;
    }
  }
  if (resolved.params.pullSecret === undefined)
    return new PullSecretError(
      'PULL_SECRET_INVALID',
      'invalid pull secret format: the cluster has no pull secret data',
    );
  return resolved.params.pullSecret;
}
