import { createHash } from 'node:crypto';
import { PullSecretError } from '../errors/index.js';

/**
 * Naming rules shared by every target. Each check throws IDENTIFIER_INVALID with a
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

/**
 * Describes an untrusted value without quoting it: its length and a short SHA-256 prefix, enough to
 * tell two values apart or match one the operator holds (`printf %s VALUE | sha256sum`). For input
 * that failed its check: it may be a credential (`user:pass@quay.io`, a token sent as an id).
 */
export function describeHidden(value: string): string {
  const hash = createHash('sha256').update(value, 'utf8').digest('hex').slice(0, 8);
  return `${value.length} characters, sha256 ${hash}…`;
}

/**
 * Quotes an untrusted value when it has the expected, credential-free form `safe`, and describes
 * it (`describeHidden`) otherwise: e.g. an event id is shown when it is a UUID.
 */
export function quoteIfSafe(value: string, safe: RegExp): string {
  return safe.test(value) ? quoteIdentifier(value) : `(${describeHidden(value)})`;
}

/** Position (1-based) and class of the first character `allowed` refuses, or undefined when all pass. */
function firstRefused(value: string, allowed: RegExp): string | undefined {
  const chars = [...value];
  const at = chars.findIndex((c) => !allowed.test(c));
  if (at < 0) return undefined;
  const c = chars[at] ?? '';
  // Punctuation is named (it is what people get wrong, e.g. "/" or "@"); letters and digits are not.
  const shown = /^[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]$/.test(c)
    ? ` ${JSON.stringify(c)}`
    : /^[A-Z]$/.test(c)
      ? ' (uppercase)'
      : c.trim() === ''
        ? ' (whitespace or control)'
        : '';
  return `character ${at + 1}${shown}`;
}

const ID_CHAR = /^[a-z0-9-]$/;

function fail(what: string, value: string, rule: string, allowed = ID_CHAR): never {
  const refused =
    value.length === 0
      ? 'empty'
      : [firstRefused(value, allowed), describeHidden(value)].filter(Boolean).join(', ');
  throw new PullSecretError('IDENTIFIER_INVALID', `invalid ${what} (${refused}): ${rule}`);
}

/** True for a valid cluster id (the rule `assertClusterId` enforces). */
export function isClusterId(id: string): boolean {
  return CLUSTER_ID.test(id);
}

/** True for a valid Kubernetes object name (the rule `assertKubernetesName` enforces). */
export function isKubernetesName(name: string, maxLength = 253): boolean {
  return name.length <= maxLength && (maxLength <= 63 ? DNS1123_LABEL : DNS1123_SUBDOMAIN).test(name);
}

/**
 * Validates a cluster id: it is used in a cloud label value, a Kubernetes namespace and a Job name,
 * so it must be a DNS-1123 label of at most 63 characters (lowercase letters, digits, `-`).
 */
export function assertClusterId(id: string): void {
  if (!isClusterId(id)) {
    fail(
      'cluster id',
      id,
      'must be 1-63 lowercase letters, digits or "-", starting and ending with a letter or digit',
    );
  }
}

/** Validates a cloud secret id: `[A-Za-z0-9_-]{1,255}` (GCP Secret Manager's rule). */
export function assertSecretId(id: string): void {
  if (!SECRET_ID.test(id))
    fail('secret name', id, 'must be 1-255 characters of letters, digits, "_" or "-"', /^[A-Za-z0-9_-]$/);
}

/** Validates cloud labels: keys start with a lowercase letter; values are lowercase, digits, `_`, `-`, ≤ 63. */
export function assertLabels(labels: Readonly<Record<string, string>>): void {
  for (const [key, value] of Object.entries(labels)) {
    if (!LABEL_KEY.test(key))
      fail(
        'label key',
        key,
        'must start with a lowercase letter and hold at most 63 lowercase letters, digits, "_" or "-"',
        /^[a-z0-9_-]$/,
      );
    if (!LABEL_VALUE.test(value))
      fail(
        `label value for ${key}`,
        value,
        'must hold at most 63 lowercase letters, digits, "_" or "-"',
        /^[a-z0-9_-]$/,
      );
  }
}

/** Validates a Kubernetes object name (DNS-1123 subdomain, or label when `maxLength` ≤ 63). */
export function assertKubernetesName(name: string, what: string, maxLength = 253): void {
  if (!isKubernetesName(name, maxLength)) {
    fail(
      what,
      name,
      `must be a DNS-1123 name of at most ${maxLength} lowercase letters, digits, ` +
        `"-"${maxLength > 63 ? ' or "."' : ''}`,
      maxLength > 63 ? /^[a-z0-9.-]$/ : ID_CHAR,
    );
  }
}

/** The default cloud secret id for a cluster. */
export function defaultSecretId(clusterId: string): string {
  return `hyperfleet-${clusterId}-pull-secret`;
}

/**
 * The cluster of a default cloud secret id (`hyperfleet-{cluster-id}-pull-secret`), the inverse of
 * `defaultSecretId`; `undefined` for any other name or a cluster id that fails `assertClusterId`.
 */
export function clusterIdOfSecretId(secretId: string): string | undefined {
  const match = /^hyperfleet-(.+)-pull-secret$/.exec(secretId);
  const clusterId = match?.[1];
  return clusterId !== undefined && CLUSTER_ID.test(clusterId) ? clusterId : undefined;
}

/** Labels put on every cloud secret we create. `managed-by=hyperfleet` marks ownership. */
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
