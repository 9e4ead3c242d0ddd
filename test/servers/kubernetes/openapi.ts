import { RESOURCE_TYPES, type ResourceType } from './types.js';

/**
 * A minimal OpenAPI v3 surface: the index at `/openapi/v3` and one document per group-version
 * listing each kind's PATCH operation with its `fieldValidation` query parameter. That is what
 * kubectl checks to decide that the server validates fields itself (`fieldValidation=Strict`),
 * instead of downloading full schemas to validate on the client. No schemas are served.
 */

function gvPath(rt: ResourceType): string {
  return rt.group === '' ? `api/${rt.version}` : `apis/${rt.group}/${rt.version}`;
}

const HASH = 'pull-secret-test';

function gvDocument(gv: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const rt of RESOURCE_TYPES.filter((r) => gvPath(r) === gv)) {
    const path = rt.namespaced
      ? `/${gv}/namespaces/{namespace}/${rt.resource}/{name}`
      : `/${gv}/${rt.resource}/{name}`;
    const operation = (action: string) => ({
      operationId: `${action}${rt.kind}`,
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': { group: rt.group, version: rt.version, kind: rt.kind },
      parameters: [
        { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
        { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
      ],
      responses: { '200': { description: 'OK' } },
    });
    paths[path] = { patch: operation('patch'), put: operation('put') };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.0' },
    paths,
    components: { schemas: {} },
  };
}

/** The OpenAPI v3 document at `path` (`/openapi/v3` or `/openapi/v3/{gv}`), or undefined. */
export function openApiDocument(path: string): unknown {
  const gvs = [...new Set(RESOURCE_TYPES.map(gvPath))];
  if (path === '/openapi/v3') {
    return {
      paths: Object.fromEntries(
        gvs.map((gv) => [gv, { serverRelativeURL: `/openapi/v3/${gv}?hash=${HASH}` }]),
      ),
    };
  }
  const gv = path.replace(/^\/openapi\/v3\//, '');
  return path.startsWith('/openapi/v3/') && gvs.includes(gv) ? gvDocument(gv) : undefined;
}
