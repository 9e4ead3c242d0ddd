import type { ResourceType } from './types.js';

/**
 * Resource types served besides namespaces, Secrets and Jobs: ConfigMaps (rollback pins),
 * ServiceAccounts, the RBAC objects (evaluated by `rbac.ts`), SubjectAccessReviews (create-only,
 * answered by `access-review.ts`), the `PullSecretShare` custom resource of
 * `deploy/components/shares/pullsecretshare-crd.yaml`, and Leases (leader election).
 */

/** Group of the project's custom resources. */
export const SHARE_GROUP = 'pullsecret.hyperfleet.io';
export const RBAC_GROUP = 'rbac.authorization.k8s.io';
export const AUTHORIZATION_GROUP = 'authorization.k8s.io';
export const COORDINATION_GROUP = 'coordination.k8s.io';

const base = { shortNames: [] as string[], hasStatus: false, tracksGeneration: false, maxNameLength: 253 };

export const EXTRA_RESOURCE_TYPES: readonly ResourceType[] = [
  // Pods exist only as the job runner's record of each run (status with the termination message).
  {
    ...base,
    resource: 'pods',
    singular: 'pod',
    group: '',
    version: 'v1',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    hasStatus: true,
    maxNameLength: 253,
  },
  // ConfigMaps hold the rollback pins: core group, namespaced, `cm`, names up to 253 characters
  // (https://kubernetes.io/docs/reference/kubernetes-api/config-and-storage-resources/config-map-v1/).
  {
    ...base,
    resource: 'configmaps',
    singular: 'configmap',
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    namespaced: true,
    shortNames: ['cm'],
  },
  {
    ...base,
    resource: 'serviceaccounts',
    singular: 'serviceaccount',
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    namespaced: true,
    shortNames: ['sa'],
  },
  {
    ...base,
    resource: 'roles',
    singular: 'role',
    group: RBAC_GROUP,
    version: 'v1',
    kind: 'Role',
    namespaced: true,
  },
  {
    ...base,
    resource: 'rolebindings',
    singular: 'rolebinding',
    group: RBAC_GROUP,
    version: 'v1',
    kind: 'RoleBinding',
    namespaced: true,
  },
  {
    ...base,
    resource: 'clusterroles',
    singular: 'clusterrole',
    group: RBAC_GROUP,
    version: 'v1',
    kind: 'ClusterRole',
    namespaced: false,
  },
  {
    ...base,
    resource: 'clusterrolebindings',
    singular: 'clusterrolebinding',
    group: RBAC_GROUP,
    version: 'v1',
    kind: 'ClusterRoleBinding',
    namespaced: false,
  },
  {
    ...base,
    resource: 'subjectaccessreviews',
    singular: 'subjectaccessreview',
    group: AUTHORIZATION_GROUP,
    version: 'v1',
    kind: 'SubjectAccessReview',
    namespaced: false,
  },
  {
    ...base,
    resource: 'pullsecretshares',
    singular: 'pullsecretshare',
    group: SHARE_GROUP,
    version: 'v1alpha1',
    kind: 'PullSecretShare',
    namespaced: false,
    shortNames: ['pss'],
    hasStatus: true,
    tracksGeneration: true,
  },
  // Leases for leader election
  // (https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/lease-v1/): namespaced,
  // no status subresource; an update at a stale resourceVersion is refused with 409 Conflict by the
  // shared update path (operations.ts), as the API server's optimistic concurrency does
  // (https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions).
  {
    ...base,
    resource: 'leases',
    singular: 'lease',
    group: COORDINATION_GROUP,
    version: 'v1',
    kind: 'Lease',
    namespaced: true,
  },
];
