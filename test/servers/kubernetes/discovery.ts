import { apiVersionOf, RESOURCE_TYPES, type ResourceType } from './types.js';

/**
 * Legacy discovery documents (`/version`, `/api`, `/api/v1`, `/apis`, `/apis/batch/v1`), enough for
 * kubectl's REST mapper to find the served kinds. Aggregated discovery is not offered; kubectl
 * falls back to these when the answer is plain `application/json`.
 */

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function resourceList(group: string, version: string): Record<string, unknown> {
  const resources: Record<string, unknown>[] = [];
  for (const rt of RESOURCE_TYPES.filter((r) => r.group === group && r.version === version)) {
    resources.push({
      name: rt.resource,
      singularName: rt.singular,
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: rt.resource === 'namespaces' ? VERBS.filter((v) => v !== 'deletecollection') : VERBS,
      ...(rt.shortNames.length > 0 ? { shortNames: rt.shortNames } : {}),
      ...(rt.resource === 'jobs' ? { categories: ['all'] } : {}),
    });
    if (rt.hasStatus)
      resources.push({
        name: `${rt.resource}/status`,
        singularName: '',
        namespaced: rt.namespaced,
        kind: rt.kind,
        verbs: ['get', 'patch', 'update'],
      });
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group === '' ? version : `${group}/${version}`,
    resources,
  };
}

function groups(): Record<string, unknown>[] {
  const names = [...new Set(RESOURCE_TYPES.map((r) => r.group).filter((g) => g !== ''))];
  return names.map((name) => {
    const versions = [
      ...new Set(RESOURCE_TYPES.filter((r) => r.group === name).map((r: ResourceType) => apiVersionOf(r))),
    ].map((gv) => ({
      groupVersion: gv,
      version: gv.split('/')[1] ?? '',
    }));
    return { name, versions, preferredVersion: versions[0] };
  });
}

/** The discovery document served at `path`, or `undefined` when `path` is not a discovery path. */
export function discoveryDocument(path: string, serverAddress: string): unknown {
  if (path === '/version') {
    return {
      major: '1',
      minor: '32',
      gitVersion: 'v1.32.0-pull-secret-test',
      gitCommit: '0000000',
      gitTreeState: 'clean',
      buildDate: '2025-01-01T00:00:00Z',
      goVersion: 'go1.23',
      compiler: 'gc',
      platform: 'linux/amd64',
    };
  }
  if (path === '/api') {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }
  if (path === '/api/v1') return resourceList('', 'v1');
  if (path === '/apis') return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups() };
  const group = /^\/apis\/([^/]+)$/.exec(path);
  if (group) {
    const found = groups().find((g) => g.name === group[1]);
    return found && { kind: 'APIGroup', apiVersion: 'v1', ...found };
  }
  const gv = /^\/apis\/([^/]+)\/([^/]+)$/.exec(path);
  if (gv && RESOURCE_TYPES.some((r) => r.group === gv[1] && r.version === gv[2]))
    return resourceList(gv[1] ?? '', gv[2] ?? '');
  return undefined;
}
