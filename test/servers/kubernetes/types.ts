/** The JSON shapes the test server stores and serves. */

import { EXTRA_RESOURCE_TYPES } from './extra-types.js';

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** A served resource type (what discovery lists). */
export interface ResourceType {
  /** Plural resource name, as in URLs: `secrets`. */
  resource: string;
  singular: string;
  /** API group; '' for the core group. */
  group: string;
  version: string;
  kind: string;
  namespaced: boolean;
  shortNames: string[];
  /** Has a `/status` subresource: writes to the main resource keep `status`, and vice versa. */
  hasStatus: boolean;
  /** `metadata.generation` is set and bumped on spec changes (true for Jobs, not Secrets). */
  tracksGeneration: boolean;
  /** Longest valid `metadata.name`. */
  maxNameLength: number;
}

export const RESOURCE_TYPES: readonly ResourceType[] = [
  {
    resource: 'namespaces',
    singular: 'namespace',
    group: '',
    version: 'v1',
    kind: 'Namespace',
    namespaced: false,
    shortNames: ['ns'],
    hasStatus: true,
    tracksGeneration: false,
    maxNameLength: 63,
  },
  {
    resource: 'secrets',
    singular: 'secret',
    group: '',
    version: 'v1',
    kind: 'Secret',
    namespaced: true,
    shortNames: [],
    hasStatus: false,
    tracksGeneration: false,
    maxNameLength: 253,
  },
  // Job names feed the `job-name` pod label, which caps them at 63 characters.
  {
    resource: 'jobs',
    singular: 'job',
    group: 'batch',
    version: 'v1',
    kind: 'Job',
    namespaced: true,
    shortNames: [],
    hasStatus: true,
    tracksGeneration: true,
    maxNameLength: 63,
  },
  // ServiceAccounts, RBAC, SubjectAccessReviews and the PullSecretShare custom resource.
  ...EXTRA_RESOURCE_TYPES,
];

export function apiVersionOf(rt: ResourceType): string {
  return rt.group === '' ? rt.version : `${rt.group}/${rt.version}`;
}

/** The resource type served at `group/version/resource`, if any. */
export function resourceByPath(group: string, version: string, resource: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((r) => r.group === group && r.version === version && r.resource === resource);
}

/** The resource type of an object's `apiVersion` + `kind`, if served. */
export function resourceByKind(apiVersion: string, kind: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
}

/** Deep copy, so callers never share state with the store. */
export function clone<T>(value: T): T {
  return structuredClone(value);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) if (value[key] !== undefined) out[key] = sortKeys(value[key]);
  return out;
}

/** Deep equality of JSON values, ignoring object key order (clients serialize in any order). */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}
