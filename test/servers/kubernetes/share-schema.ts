import type { StatusCause } from './status.js';
import { isRecord, type KubeObject } from './types.js';
import { invalidValue, required } from './validate-meta.js';

/**
 * The checks the `openAPIV3Schema` of the PullSecretShare CRD (deploy/components/shares/pullsecretshare-crd.yaml)
 * makes on create and update, written out: required fields, types and enums. Deeper rules (label
 * selector syntax, names) are the controller's, which reports them in the share's status.
 */

function stringList(field: string, value: unknown, causes: StatusCause[]): void {
  if (value === undefined) return;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    causes.push(invalidValue(field, value, `${field} in body must be of type array of strings`));
}

/** Validation causes of a PullSecretShare; none for other kinds. */
export function shareCauses(obj: KubeObject): StatusCause[] {
  if (obj.kind !== 'PullSecretShare') return [];
  const causes: StatusCause[] = [];
  const spec = obj.spec;
  if (!isRecord(spec)) return [required('spec')];
  const source = spec.source;
  if (!isRecord(source)) causes.push(required('spec.source'));
  else {
    if (typeof source.clusterId !== 'string' || source.clusterId === '')
      causes.push(required('spec.source.clusterId'));
    if (source.kind !== undefined && source.kind !== 'pullSecret' && source.kind !== 'entitlement') {
      causes.push({
        reason: 'FieldValueNotSupported',
        field: 'spec.source.kind',
        message: `Unsupported value: ${JSON.stringify(source.kind)}: supported values: "pullSecret", "entitlement"`,
      });
    }
  }
  const consumers = spec.consumers;
  if (!isRecord(consumers)) causes.push(required('spec.consumers'));
  else {
    stringList('spec.consumers.namespaces', consumers.namespaces, causes);
    stringList('spec.consumers.serviceAccounts', consumers.serviceAccounts, causes);
    if (consumers.namespaceSelector !== undefined && !isRecord(consumers.namespaceSelector))
      causes.push(
        invalidValue(
          'spec.consumers.namespaceSelector',
          consumers.namespaceSelector,
          'must be of type object',
        ),
      );
  }
  if (spec.target !== undefined) {
    if (!isRecord(spec.target))
      causes.push(invalidValue('spec.target', spec.target, 'must be of type object'));
    else if (spec.target.secretName !== undefined && typeof spec.target.secretName !== 'string')
      causes.push(invalidValue('spec.target.secretName', spec.target.secretName, 'must be of type string'));
  }
  return causes;
}
