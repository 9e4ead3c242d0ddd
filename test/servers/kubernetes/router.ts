import { resourceByPath, type ResourceType } from './types.js';

/** A request path resolved to a served resource. */
export interface ResourceRoute {
  rt: ResourceType;
  /** Namespace from the URL; undefined for cluster-scoped or all-namespaces requests. */
  namespace?: string;
  name?: string;
  subresource?: string;
  /** The legacy `/watch/` path form was used. */
  watchPath: boolean;
}

/**
 * Resolves `/api/v1/…` and `/apis/{group}/{version}/…` paths (with the optional legacy `watch/`
 * segment) to a resource route; `undefined` when nothing is served there.
 */
export function parseRoute(pathname: string): ResourceRoute | undefined {
  const parts = pathname
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    [group, version, rest] = ['', parts[1] ?? '', parts.slice(2)];
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    [group, version, rest] = [parts[1] ?? '', parts[2] ?? '', parts.slice(3)];
  } else return undefined;
  const watchPath = rest[0] === 'watch';
  if (watchPath) rest = rest.slice(1);

  // namespaces/{ns}/{resource}[/{name}[/{sub}]] — unless it is the namespace object itself.
  if (rest[0] === 'namespaces' && rest.length >= 3 && rest[2] !== 'status' && rest[2] !== 'finalize') {
    const rt = resourceByPath(group, version, rest[2] ?? '');
    if (rt === undefined || !rt.namespaced || rest.length > 5) return undefined;
    return { rt, namespace: rest[1], name: rest[3], subresource: rest[4], watchPath };
  }
  const rt = resourceByPath(group, version, rest[0] ?? '');
  if (rt === undefined || rest.length > 3) return undefined;
  // A namespaced resource without a namespace is the all-namespaces list / watch.
  if (rt.namespaced && rest.length > 1) return undefined;
  return { rt, name: rest[1], subresource: rest[2], watchPath };
}
