import { API_BASE_PATH } from '../../hyperfleet/base-url.js';
import type { ProblemKind } from './problem.js';

/** The operations the stand-in implements; `unmatched` covers every other request. */
export const ROUTE_NAMES = [
  'listClusters',
  'createCluster',
  'getCluster',
  'patchCluster',
  'deleteCluster',
  'listStatuses',
  'putStatus',
  'unmatched',
] as const;
export type RouteName = (typeof ROUTE_NAMES)[number];

export interface RouteMatch {
  route: RouteName;
  /** The contract's path template, to look up the declared responses. */
  template?: string;
  clusterId?: string;
  query: URLSearchParams;
  /** Set for `unmatched`: how to answer. */
  refusal?: { kind: ProblemKind; detail: string; allow?: string[] };
}

const CLUSTERS = `${API_BASE_PATH}/clusters`;
const OPERATIONS: Record<string, Partial<Record<string, RouteName>>> = {
  collection: { GET: 'listClusters', POST: 'createCluster' },
  cluster: { GET: 'getCluster', PATCH: 'patchCluster', DELETE: 'deleteCluster' },
  statuses: { GET: 'listStatuses', PUT: 'putStatus' },
};
const TEMPLATES: Record<string, string> = {
  collection: CLUSTERS,
  cluster: `${CLUSTERS}/{cluster_id}`,
  statuses: `${CLUSTERS}/{cluster_id}/statuses`,
};

/**
 * Matches a request on the raw path: `..` and `%2F` are not resolved, so an id can never reach
 * another route. Routes of the contract the stand-in does not implement (node pools, resources,
 * force-delete) answer 501; paths the API does not have answer 404 `HYPERFLEET-NTF-000`.
 */
export function matchRoute(method: string, rawUrl: string): RouteMatch {
  const queryAt = rawUrl.indexOf('?');
  const path = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
  const query = new URLSearchParams(queryAt === -1 ? '' : rawUrl.slice(queryAt + 1));
  const notFound: RouteMatch = {
    route: 'unmatched',
    query,
    refusal: { kind: 'routeNotFound', detail: `The requested endpoint '${method} ${path}' does not exist` },
  };
  if (!path.startsWith(`${API_BASE_PATH}/`)) return notFound;
  const segments = path.slice(API_BASE_PATH.length + 1).split('/');
  const [top, rawId, sub, ...rest] = segments;
  if (top === 'nodepools' || top === 'resources') return notImplemented(query, top);
  if (top !== 'clusters' || segments.some((s) => s === '')) return notFound;
  if (sub === 'nodepools' || (sub === 'force-delete' && rest.length === 0)) return notImplemented(query, sub);
  let shape: string;
  if (rawId === undefined) shape = 'collection';
  else if (sub === undefined) shape = 'cluster';
  else if (sub === 'statuses' && rest.length === 0) shape = 'statuses';
  else return notFound;
  const operations = OPERATIONS[shape] ?? {};
  const route = operations[method];
  const clusterId = rawId === undefined ? undefined : decodeSegment(rawId);
  if (route === undefined) {
    const allow = Object.keys(operations);
    const hint = shape === 'statuses' && method === 'POST' ? '; adapters report status with PUT' : '';
    return {
      route: 'unmatched',
      query,
      clusterId,
      refusal: {
        kind: 'methodNotAllowed',
        detail: `${method} is not allowed here (allowed: ${allow.join(', ')})${hint}`,
        allow,
      },
    };
  }
  return { route, template: TEMPLATES[shape], clusterId, query };
}

function notImplemented(query: URLSearchParams, what: string): RouteMatch {
  return {
    route: 'unmatched',
    query,
    refusal: { kind: 'notImplemented', detail: `the HyperFleet API stand-in does not implement ${what}` },
  };
}

/** A malformed escape keeps the raw text: no cluster has such an id, so the answer is a plain 404. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
