import { PullSecretError } from '../errors/index.js';
import {
  assertClusterId,
  assertKubernetesName,
  assertLabels,
  assertSecretId,
  defaultSecretId,
  managedLabels,
  quoteIdentifier,
} from './identifiers.js';

/**
 * Every name one cluster's reconcile uses (docs/architecture.md), derived and checked once,
 * before the first write: a name that cannot be used must stop the work before a store or
 * Kubernetes call, not after a version was stored. Pass the frozen result along instead of
 * checking the same id again in each step.
 */
export interface ClusterNames {
  readonly clusterId: string;
  /** Cloud secret id: the override, or `hyperfleet-{cluster-id}-pull-secret`. */
  readonly secretId: string;
  /** Labels of the cloud secret (`managed-by=hyperfleet`, `cluster-id`, ...). */
  readonly labels: Readonly<Record<string, string>>;
  /** Namespace of the Kubernetes Secret: the override, or `clusters-{cluster-id}`. */
  readonly namespace: string;
  /** `{cluster-id}-pull-secret`. */
  readonly kubernetesSecretName: string;
}

interface ClusterNamesInput {
  clusterId: string;
  /** Cloud secret id override (`SECRET_NAME`, `spec.pullSecret.secretName`). */
  secretName?: string;
  /** Management namespace override (`MANAGEMENT_NAMESPACE`, a configured field path). */
  namespace?: string;
  /**
   * Whether a Kubernetes Secret will be written (default true). When false the namespace and the
   * Secret name are still derived, for status reports, but not checked: they are not used.
   */
  kubernetes?: boolean;
}

/** Namespaces (DNS-1123 labels) hold at most 63 characters. */
const MAX_NAMESPACE = 63;
const NAMESPACE_PREFIX = 'clusters-';

/** `clusters-{cluster-id}`: the namespace HyperShift creates for a hosted cluster. */
export function defaultManagementNamespace(clusterId: string): string {
  return `${NAMESPACE_PREFIX}${clusterId}`;
}

/** `{cluster-id}-pull-secret`. */
export function pullSecretName(clusterId: string): string {
  return `${clusterId}-pull-secret`;
}

function checkNamespace(clusterId: string, override: string | undefined, namespace: string): void {
  if (override !== undefined) {
    assertKubernetesName(namespace, 'Kubernetes namespace', MAX_NAMESPACE);
    return;
  }
  if (namespace.length > MAX_NAMESPACE) {
    throw new PullSecretError(
      'IDENTIFIER_INVALID',
      `cluster id ${quoteIdentifier(clusterId)} (${clusterId.length} characters) is too long for the ` +
        `default namespace ${NAMESPACE_PREFIX}{cluster-id}, which Kubernetes limits to ${MAX_NAMESPACE} ` +
        `characters: the id may have at most ${MAX_NAMESPACE - NAMESPACE_PREFIX.length}, or set the ` +
        `management namespace`,
    );
  }
  assertKubernetesName(namespace, 'Kubernetes namespace', MAX_NAMESPACE);
}

/**
 * Derives and checks the names of one cluster's reconcile. Pure, no I/O.
 *
 * @throws PullSecretError IDENTIFIER_INVALID naming the first unusable name and the rule it breaks;
 *   an invalid value is described (length, short hash), never quoted, since it may be a credential.
 */
export function deriveClusterNames(input: ClusterNamesInput): ClusterNames {
  const { clusterId } = input;
  assertClusterId(clusterId);
  const secretId = input.secretName ?? defaultSecretId(clusterId);
  assertSecretId(secretId);
  const labels = Object.freeze(managedLabels(clusterId));
  assertLabels(labels);
  const namespace = input.namespace ?? defaultManagementNamespace(clusterId);
  const kubernetesSecretName = pullSecretName(clusterId);
  if (input.kubernetes !== false) {
    checkNamespace(clusterId, input.namespace, namespace);
    assertKubernetesName(kubernetesSecretName, 'Kubernetes Secret name', 253);
  }
  return Object.freeze({ clusterId, secretId, labels, namespace, kubernetesSecretName });
}
