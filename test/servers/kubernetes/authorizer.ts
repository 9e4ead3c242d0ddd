import { RBAC_GROUP } from './extra-types.js';
import { authorize, PRIVILEGED_GROUP, type AccessRequest, type RbacObjects } from './rbac.js';
import type { ResourceRoute } from './router.js';
import { StatusError } from './status.js';
import type { ObjectStore } from './store.js';
import { resourceByPath, type KubeObject } from './types.js';

/**
 * Authorization of every request, as kube-apiserver does it after authentication: the request's
 * attributes (verb, API group, resource, subresource, namespace, name, or a non-resource path) are
 * decided by `rbac.ts` over the RBAC objects in the store, and a denial is 403 Forbidden with the
 * API server's message (kubernetes/kubernetes
 * staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go `forbiddenMessage`).
 */

/** Who a bearer token authenticates as. */
export interface Identity {
  user: string;
  groups: readonly string[];
}

/** The identity of the server's own kubeconfig: an administrator, as a cluster's admin kubeconfig is. */
export const ADMIN: Identity = {
  user: 'kubernetes-admin',
  groups: [PRIVILEGED_GROUP, 'system:authenticated'],
};

/** A service account's identity, as its token authenticates (pkg/serviceaccount/util.go `UserInfo`). */
export function serviceAccountIdentity(namespace: string, name: string): Identity {
  return {
    user: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
  };
}

const bootstrapLabels = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };

/**
 * The default roles every authenticated client holds (discovery, and reviewing its own access):
 * plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go, `system:discovery`, `system:basic-user`
 * and `system:public-info-viewer`, bound to `system:authenticated`.
 */
export function bootstrapPolicy(): KubeObject[] {
  const role = (name: string, rules: unknown[]): KubeObject => ({
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRole',
    metadata: { name, labels: bootstrapLabels },
    rules,
  });
  const binding = (name: string): KubeObject => ({
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: bootstrapLabels },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name },
    subjects: [{ apiGroup: RBAC_GROUP, kind: 'Group', name: 'system:authenticated' }],
  });
  return [
    role('system:discovery', [
      {
        verbs: ['get'],
        nonResourceURLs: [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      },
    ]),
    role('system:basic-user', [
      {
        verbs: ['create'],
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      },
    ]),
    role('system:public-info-viewer', [
      { verbs: ['get'], nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] },
    ]),
    binding('system:discovery'),
    binding('system:basic-user'),
    binding('system:public-info-viewer'),
  ];
}

/** The RBAC objects that can decide a request in `namespace` (namespaced ones of that namespace only). */
export function rbacObjects(store: ObjectStore, namespace: string | undefined): RbacObjects {
  const of = (resource: string, namespaced: boolean) => {
    const rt = resourceByPath(RBAC_GROUP, 'v1', resource);
    if (rt === undefined || (namespaced && namespace === undefined)) return [];
    return store.list(rt, namespaced ? namespace : undefined);
  };
  return {
    roles: of('roles', true),
    roleBindings: of('rolebindings', true),
    clusterRoles: of('clusterroles', false),
    clusterRoleBindings: of('clusterrolebindings', false),
  };
}

/**
 * The request verb (https://kubernetes.io/docs/reference/access-authn-authz/authorization/#determine-the-request-verb):
 * `method` is the handler's (WATCH for a watch).
 */
function verbOf(method: string, named: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return named ? 'get' : 'list';
    case 'WATCH':
      return 'watch';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

function forbiddenMessage(identity: Identity, req: AccessRequest): string {
  if (req.resource === undefined)
    return `forbidden: User "${identity.user}" cannot ${req.nonResource?.verb ?? ''} path "${req.nonResource?.path ?? ''}"`;
  const r = req.resource;
  const resource = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  const scope = r.namespace ? `in the namespace "${r.namespace}"` : 'at the cluster scope';
  const qualified = r.group === '' ? r.resource : `${r.resource}.${r.group}`;
  const subject = r.name ? `${qualified} "${r.name}"` : qualified;
  return `${subject} is forbidden: User "${identity.user}" cannot ${r.verb} resource "${resource}" in API group "${r.group}" ${scope}`;
}

/**
 * Authorizes one request. `route` undefined: a non-resource path (discovery, OpenAPI).
 * @throws StatusError 403 Forbidden when RBAC allows it to none of the identity's names.
 */
export function authorizeRequest(
  store: ObjectStore,
  identity: Identity,
  method: string,
  path: string,
  route: ResourceRoute | undefined,
): void {
  // Decided before reading any RBAC object (as the privileged-group authorizer comes first), so an
  // administrator's requests cost no list of the store.
  if (identity.groups.includes(PRIVILEGED_GROUP)) return;
  const req: AccessRequest = { user: identity.user, groups: identity.groups };
  if (route === undefined) req.nonResource = { verb: method === 'HEAD' ? 'get' : method.toLowerCase(), path };
  else {
    // A create names no object in the URL; its name is in the body, which authorization does not read.
    req.resource = {
      verb: verbOf(method, route.name !== undefined),
      group: route.rt.group,
      resource: route.rt.resource,
      subresource: route.subresource,
      name: route.name,
      namespace: route.namespace,
    };
  }
  if (authorize(rbacObjects(store, req.resource?.namespace), req).allowed) return;
  const r = req.resource;
  throw new StatusError(
    403,
    'Forbidden',
    forbiddenMessage(identity, req),
    r === undefined ? {} : { name: r.name, group: r.group || undefined, kind: r.resource },
  );
}
