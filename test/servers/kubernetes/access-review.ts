import { rbacObjects } from './authorizer.js';
import { authorize, type AccessRequest } from './rbac.js';
import { badRequest, invalid } from './status.js';
import type { ObjectStore } from './store.js';
import { isRecord, type KubeObject } from './types.js';

/**
 * `POST /apis/authorization.k8s.io/v1/subjectaccessreviews`: the review is not stored; the answer
 * is the request with `status.allowed` (and the RBAC reason) filled in by `rbac.ts` over the RBAC
 * objects in the store. As on the API server, the groups are the ones the request names: nothing
 * is inferred from a service account user name.
 */

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * Answers one SubjectAccessReview body. @throws StatusError 400 (not an object, wrong kind) or 422
 * (no user or group; not exactly one of resourceAttributes / nonResourceAttributes).
 */
export function reviewAccess(store: ObjectStore, body: unknown): KubeObject {
  if (!isRecord(body))
    throw badRequest(
      'SubjectAccessReview in version "v1" cannot be handled as a SubjectAccessReview: body must be a JSON object',
    );
  if (body.kind !== undefined && body.kind !== 'SubjectAccessReview')
    throw badRequest(
      `the kind in the data (${JSON.stringify(body.kind)}) does not match the expected kind (SubjectAccessReview)`,
    );
  const spec = isRecord(body.spec) ? body.spec : {};
  const groups = Array.isArray(spec.groups)
    ? spec.groups.filter((g): g is string => typeof g === 'string')
    : [];
  const user = text(spec.user);
  const ra = isRecord(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
  const nra = isRecord(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
  const causes = [];
  if (user === '' && groups.length === 0)
    causes.push({
      reason: 'FieldValueRequired',
      field: 'spec.user',
      message: 'Required value: at least one of user or group must be specified',
    });
  if ((ra === undefined) === (nra === undefined)) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'spec.resourceAttributes',
      message: 'Invalid value: exactly one of nonResourceAttributes or resourceAttributes must be specified',
    });
  }
  if (causes.length > 0) throw invalid('SubjectAccessReview', 'authorization.k8s.io', '', causes);
  const request: AccessRequest = { user, groups };
  if (ra !== undefined) {
    request.resource = {
      verb: text(ra.verb),
      group: text(ra.group),
      resource: text(ra.resource),
      subresource: text(ra.subresource) || undefined,
      name: text(ra.name) || undefined,
      namespace: text(ra.namespace) || undefined,
    };
  } else if (nra !== undefined) request.nonResource = { verb: text(nra.verb), path: text(nra.path) };
  const decision = authorize(rbacObjects(store, request.resource?.namespace), request);
  const metadata = isRecord(body.metadata) ? body.metadata : {};
  return {
    kind: 'SubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { ...metadata },
    spec,
    status: decision.allowed ? { allowed: true, reason: decision.reason } : { allowed: false },
  };
}
