import { RBAC_GROUP } from './extra-types.js';
import type { StatusCause } from './status.js';
import type { ObjectMeta, ResourceType } from './types.js';

/** Object-metadata rules of the API server (apimachinery validation), with its messages. */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const TOTAL_ANNOTATION_BYTES = 256 * 1024;

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

export function invalidValue(field: string, value: unknown, detail: string): StatusCause {
  return {
    reason: 'FieldValueInvalid',
    field,
    message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
  };
}

export function required(field: string, detail?: string): StatusCause {
  return {
    reason: 'FieldValueRequired',
    field,
    message: detail ? `Required value: ${detail}` : 'Required value',
  };
}

export function tooLong(field: string, max: number, unit = 'bytes'): StatusCause {
  return { reason: 'FieldValueTooLong', field, message: `Too long: must have at most ${max} ${unit}` };
}

/** A DNS-1123 name check; `label` selects the stricter form (no dots, ≤ 63). */
export function checkDnsName(field: string, value: string, label: boolean, max: number): StatusCause[] {
  const causes: StatusCause[] = [];
  if (value.length > max) causes.push(invalidValue(field, value, `must be no more than ${max} characters`));
  if (!(label ? DNS1123_LABEL : DNS1123_SUBDOMAIN).test(value))
    causes.push(invalidValue(field, value, label ? LABEL_MSG : SUBDOMAIN_MSG));
  return causes;
}

/** A label or annotation key: optional DNS-subdomain prefix and `/`, then a qualified name ≤ 63. */
export function checkQualifiedName(field: string, key: string): StatusCause[] {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const causes: StatusCause[] = [];
  if (
    prefix !== undefined &&
    (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))
  ) {
    causes.push(invalidValue(field, key, `prefix part ${SUBDOMAIN_MSG}`));
  }
  if (name.length === 0 || name.length > 63)
    causes.push(invalidValue(field, key, 'name part must be no more than 63 characters'));
  else if (!QUALIFIED_NAME.test(name)) causes.push(invalidValue(field, key, QUALIFIED_MSG));
  return causes;
}

/** Label map rules: qualified keys, values ≤ 63 of the label-value syntax. */
export function checkLabels(field: string, labels: unknown): StatusCause[] {
  if (labels === undefined) return [];
  const causes: StatusCause[] = [];
  for (const [key, value] of Object.entries(labels as Record<string, unknown>)) {
    causes.push(...checkQualifiedName(field, key));
    if (typeof value !== 'string') continue;
    if (value.length > 63) causes.push(invalidValue(field, value, 'must be no more than 63 characters'));
    if (!LABEL_VALUE.test(value)) causes.push(invalidValue(field, value, VALUE_MSG));
  }
  return causes;
}

function checkAnnotations(annotations: unknown): StatusCause[] {
  if (annotations === undefined) return [];
  const causes: StatusCause[] = [];
  let total = 0;
  for (const [key, value] of Object.entries(annotations as Record<string, unknown>)) {
    causes.push(...checkQualifiedName('metadata.annotations', key.toLowerCase()));
    total += key.length + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
  }
  if (total > TOTAL_ANNOTATION_BYTES) causes.push(tooLong('metadata.annotations', TOTAL_ANNOTATION_BYTES));
  return causes;
}

/**
 * RBAC object names are path segments, not DNS names (`system:discovery` is valid):
 * pkg/apis/rbac/validation/validation.go `ValidateRBACName` → apimachinery `path.IsValidPathSegmentName`.
 */
function checkPathSegmentName(name: string): StatusCause[] {
  if (name === '.' || name === '..') return [invalidValue('metadata.name', name, `may not be '${name}'`)];
  const bad = ['/', '%'].find((c) => name.includes(c));
  return bad === undefined ? [] : [invalidValue('metadata.name', name, `may not contain '${bad}'`)];
}

/** Metadata rules common to every kind. */
export function checkObjectMeta(rt: ResourceType, meta: ObjectMeta): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = meta.name ?? '';
  if (name === '') causes.push(required('metadata.name', 'name or generateName is required'));
  else if (rt.group === RBAC_GROUP) causes.push(...checkPathSegmentName(name));
  else causes.push(...checkDnsName('metadata.name', name, rt.maxNameLength <= 63, rt.maxNameLength));
  if (rt.namespaced && !meta.namespace) causes.push(required('metadata.namespace'));
  causes.push(...checkLabels('metadata.labels', meta.labels));
  causes.push(...checkAnnotations(meta.annotations));
  return causes;
}
