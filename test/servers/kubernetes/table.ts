import type { KubeObject, ResourceType } from './types.js';

/**
 * Server-side printing: kubectl asks for `as=Table` in its Accept header and prints the rows the
 * server sends, so `kubectl get` output looks like a real cluster's.
 */

/** True when the Accept header asks for a meta.k8s.io Table. */
export function wantsTable(accept: string | undefined): boolean {
  return accept !== undefined && accept.includes('as=Table');
}

function age(created: string | undefined): string {
  if (created === undefined) return '<unknown>';
  const seconds = Math.max(0, Math.floor((Date.now() - Date.parse(created)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  return `${Math.floor(seconds / 3600)}h`;
}

function columns(rt: ResourceType): { names: string[]; cells: (o: KubeObject) => unknown[] } {
  switch (rt.kind) {
    case 'Secret':
      return {
        names: ['Type', 'Data'],
        cells: (o) => [o.type ?? 'Opaque', Object.keys((o.data as object | undefined) ?? {}).length],
      };
    case 'Job': {
      return {
        names: ['Status', 'Completions'],
        cells: (o) => {
          const status = (o.status ?? {}) as Record<string, number | undefined>;
          const spec = (o.spec ?? {}) as Record<string, unknown>;
          const state =
            (status.succeeded ?? 0) > 0 ? 'Complete' : (status.failed ?? 0) > 0 ? 'Failed' : 'Running';
          return [
            state,
            `${status.succeeded ?? 0}/${typeof spec.completions === 'number' ? spec.completions : 1}`,
          ];
        },
      };
    }
    case 'Namespace':
      return {
        names: ['Status'],
        cells: (o) => [((o.status ?? {}) as Record<string, unknown>).phase ?? 'Active'],
      };
    default:
      return { names: [], cells: () => [] };
  }
}

/** A `Table` of the given objects (one for a GET by name, several for a list). */
export function toTable(
  rt: ResourceType,
  objects: KubeObject[],
  resourceVersion: string,
): Record<string, unknown> {
  const { names, cells } = columns(rt);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion },
    columnDefinitions: [
      { name: 'Name', type: 'string', format: 'name', description: 'Name of the object', priority: 0 },
      ...names.map((n) => ({ name: n, type: 'string', format: '', description: n, priority: 0 })),
      { name: 'Age', type: 'string', format: '', description: 'Time since creation', priority: 0 },
    ],
    rows: objects.map((o) => ({
      cells: [o.metadata.name, ...cells(o), age(o.metadata.creationTimestamp)],
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
    })),
  };
}
