import { PullSecretError } from '../errors/index.js';

/**
 * Naming rules shared by every target (design §2). Each check throws IDENTIFIER_INVALID with a
 * message that names the rule; ids are never rewritten to fit.
 */

const SECRET_ID = /^[A-Za-z0-9_-]{1,255}$/;
const LABEL_KEY = /^[a-z][a-z0-9_-]{0,62}$/;
const LABEL_VALUE = /^[a-z0-9_-]{0,63}$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** Cluster ids: lowercase UUIDs (HyperFleet uses v7) or short lowercase slugs like `cls-abc123`. */
const CLUSTER_ID = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Shows an identifier in an error message without letting a hostile value flood or forge log lines. */
export function quoteIdentifier(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return JSON.stringify(printable.length > 80 ? `${printable.slice(0, 80)}…` : printable);
}

function fail(what: string, value: string, rule: string): never {
  throw new PullSecretError('IDENTIFIER_INVALID', `invalid ${what} ${quoteIdentifier(value)}: ${rule}`);
}

/**
 * Validates a cluster id: it is used in a cloud label value, a Kubernetes namespace and a Job name,
 * so it must be a DNS-1123 label of at most 63 characters (lowercase letters, digits, `-`).
 */
export function assertClusterId(id: string): void {
  if (!CLUSTER_ID.test(id)) {
    fail('cluster id', id, 'must be 1-63 lowercase letters, digits or "-", starting and ending with a letter or digit');
  }
}

/** Validates a cloud secret id: `[A-Za-z0-9_-]{1,255}` (GCP Secret Manager's rule). */
export function assertSecretId(id: string): void {
  if (!SECRET_ID.test(id)) fail('secret name', id, 'must be 1-255 characters of letters, digits, "_" or "-"');
}

/** Validates cloud labels: keys start with a lowercase letter; values are lowercase, digits, `_`, `-`, ≤ 63. */
export function assertLabels(labels: Readonly<Record<string, string>>): void {
  for (const [key, value] of Object.entries(labels)) {
    if (!LABEL_KEY.test(key)) fail('label key', key, 'must start with a lowercase letter and hold at most 63 lowercase letters, digits, "_" or "-"');
    if (!LABEL_VALUE.test(value)) fail(`label value for ${key}`, value, 'must hold at most 63 lowercase letters, digits, "_" or "-"');
  }
}

/** Validates a Kubernetes object name (DNS-1123 subdomain, or label when `maxLength` ≤ 63). */
export function assertKubernetesName(name: string, what: string, maxLength = 253): void {
  const pattern = maxLength <= 63 ? DNS1123_LABEL : DNS1123_SUBDOMAIN;
  if (name.length > maxLength || !pattern.test(name)) {
    fail(what, name, `must be a DNS-1123 name of at most ${maxLength} lowercase letters, digits, "-"${maxLength > 63 ? ' or "."' : ''}`);
  }
}

/** The default cloud secret id for a cluster (design §2). */
export function defaultSecretId(clusterId: string): string {
  return `hyperfleet-${clusterId}-pull-secret`;
}

/** Labels put on every cloud secret we create (design §2). `managed-by=hyperfleet` marks ownership. */
export function managedLabels(clusterId: string): Record<string, string> {
  return {
    'managed-by': 'hyperfleet',
    adapter: 'pullsecret',
    'cluster-id': clusterId,
    'resource-type': 'pull-secret',
    'hyperfleet-version': 'v1',
  };
}

/** The ownership label every managed object carries. */
export const MANAGED_BY = { key: 'managed-by', value: 'hyperfleet' } as const;

/** True when the labels mark an object as ours. */
export function isManaged(labels: Readonly<Record<string, string>> | undefined): boolean {
  return labels?.[MANAGED_BY.key] === MANAGED_BY.value;
}
