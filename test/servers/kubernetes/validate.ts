import { Job } from 'kubernetes-models/batch/v1';
import { Namespace, Secret } from 'kubernetes-models/v1';
import { badRequest, invalid, type StatusCause } from './status.js';
import { isRecord, sameJson, type KubeObject, type ResourceType } from './types.js';
import {
  checkDnsName,
  checkLabels,
  checkObjectMeta,
  invalidValue,
  required,
  tooLong,
} from './validate-meta.js';
import { rbacCauses, rbacUpdateCauses } from './rbac.js';
import { shareCauses } from './share-schema.js';

/**
 * Body validation of the test server: the OpenAPI schema via kubernetes-models, plus the API
 * server's semantic rules that a schema cannot express (names, labels, Secret data, Job policies,
 * immutable fields).
 */

const MAX_SECRET_BYTES = 1024 * 1024;
const DATA_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

interface AjvError {
  instancePath?: string;
  keyword?: string;
  message?: string;
}

function schemaModel(obj: KubeObject): { validate(): void } | undefined {
  const data = obj as never;
  switch (obj.kind) {
    case 'Secret':
      return new Secret(data);
    case 'Job':
      return new Job(data);
    case 'Namespace':
      return new Namespace(data);
    default:
      return undefined;
  }
}

/**
 * Checks the body against the kind's OpenAPI schema. Type mismatches are decoding errors in the
 * real API server (400); missing required fields are validation errors (422).
 */
function checkSchema(rt: ResourceType, obj: KubeObject): void {
  try {
    schemaModel(obj)?.validate();
  } catch (err) {
    const errors = (err as { errors?: AjvError[] }).errors ?? [];
    if (errors.some((e) => e.keyword === 'type')) {
      throw badRequest(
        `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: ${errors.map((e) => `${e.instancePath ?? ''} ${e.message ?? ''}`).join('; ')}`,
      );
    }
    const causes = errors.map((e) => ({
      reason: e.keyword === 'required' ? 'FieldValueRequired' : 'FieldValueInvalid',
      field: (e.instancePath ?? '').split('/').filter(Boolean).join('.'),
      message: e.message ?? 'invalid',
    }));
    throw invalid(rt.kind, rt.group, obj.metadata.name ?? '', causes);
  }
}

function decodeData(data: Record<string, string>): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [key, value] of Object.entries(data)) {
    if (!BASE64.test(value))
      throw badRequest(
        'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0',
      );
    out.set(key, Buffer.from(value, 'base64'));
  }
  return out;
}

function secretCauses(obj: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const data = decodeData((obj.data as Record<string, string> | undefined) ?? {});
  let total = 0;
  for (const [key, bytes] of data) {
    total += key.length + bytes.length;
    if (key.length > 253 || !DATA_KEY.test(key)) {
      causes.push(
        invalidValue(
          `data[${key}]`,
          key,
          "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
        ),
      );
    }
  }
  if (total > MAX_SECRET_BYTES) causes.push(tooLong('data', MAX_SECRET_BYTES));
  const dockerKey =
    obj.type === 'kubernetes.io/dockerconfigjson'
      ? '.dockerconfigjson'
      : obj.type === 'kubernetes.io/dockercfg'
        ? '.dockercfg'
        : undefined;
  if (dockerKey !== undefined) {
    const payload = data.get(dockerKey);
    if (payload === undefined) causes.push(required(`data[${dockerKey}]`));
    else {
      try {
        JSON.parse(payload.toString('utf8'));
      } catch {
        // The API server never echoes Secret contents in its messages.
        causes.push(
          invalidValue(`data[${dockerKey}]`, '<secret contents redacted>', 'invalid character in JSON'),
        );
      }
    }
  }
  return causes;
}

function jobCauses(obj: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = isRecord(obj.spec) ? obj.spec : {};
  const template = isRecord(spec.template) ? spec.template : {};
  const templateMeta = isRecord(template.metadata) ? template.metadata : {};
  const podSpec = isRecord(template.spec) ? template.spec : {};
  causes.push(...checkLabels('spec.template.metadata.labels', templateMeta.labels));
  const policy = podSpec.restartPolicy;
  if (policy !== 'Never' && policy !== 'OnFailure') {
    causes.push({
      reason: 'FieldValueNotSupported',
      field: 'spec.template.spec.restartPolicy',
      message: `Unsupported value: ${JSON.stringify(policy ?? 'Always')}: supported values: "OnFailure", "Never"`,
    });
  }
  const containers = Array.isArray(podSpec.containers) ? (podSpec.containers as unknown[]) : [];
  if (containers.length === 0) causes.push(required('spec.template.spec.containers'));
  containers.forEach((c, i) => {
    const container = isRecord(c) ? c : {};
    const field = `spec.template.spec.containers[${i}]`;
    if (typeof container.name !== 'string' || container.name === '') causes.push(required(`${field}.name`));
    else causes.push(...checkDnsName(`${field}.name`, container.name, true, 63));
    if (typeof container.image !== 'string' || container.image.trim() === '')
      causes.push(required(`${field}.image`));
  });
  for (const key of [
    'backoffLimit',
    'completions',
    'parallelism',
    'activeDeadlineSeconds',
    'ttlSecondsAfterFinished',
  ] as const) {
    const value = spec[key];
    if (typeof value === 'number' && value < 0)
      causes.push(invalidValue(`spec.${key}`, value, 'must be greater than or equal to 0'));
  }
  return causes;
}

/**
 * Validates an object about to be stored (create, or the result of an update/patch).
 * @throws StatusError 400 (undecodable body) or 422 Invalid with `details.causes`.
 */
export function validateObject(rt: ResourceType, obj: KubeObject): void {
  // Undecodable base64 fails in the API server's decoder (400), before any schema check.
  if (rt.kind === 'Secret' && isRecord(obj.data)) decodeData(obj.data as Record<string, string>);
  checkSchema(rt, obj);
  const causes = checkObjectMeta(rt, obj.metadata);
  if (rt.kind === 'Secret') causes.push(...secretCauses(obj));
  if (rt.kind === 'Job') causes.push(...jobCauses(obj));
  causes.push(...rbacCauses(obj), ...shareCauses(obj));
  if (causes.length > 0) throw invalid(rt.kind, rt.group, obj.metadata.name ?? '', causes);
}

function immutable(field: string, value: unknown): StatusCause {
  return {
    reason: 'FieldValueInvalid',
    field,
    message: `Invalid value: ${JSON.stringify(value)}: field is immutable`,
  };
}

/**
 * Rules that compare an update with the stored object: immutable fields.
 * @throws StatusError 422 Invalid.
 */
export function validateUpdate(rt: ResourceType, next: KubeObject, old: KubeObject): void {
  const causes: StatusCause[] = [];
  if (rt.kind === 'Secret') {
    if ((next.type ?? 'Opaque') !== (old.type ?? 'Opaque')) causes.push(immutable('type', next.type));
    if (old.immutable === true && (!sameJson(next.data, old.data) || next.immutable !== true)) {
      causes.push({
        reason: 'FieldValueForbidden',
        field: 'data',
        message: 'Forbidden: field is immutable when `immutable` is set',
      });
    }
  }
  if (rt.kind === 'Job') {
    const ns = (next.spec ?? {}) as Record<string, unknown>;
    const os = (old.spec ?? {}) as Record<string, unknown>;
    for (const key of ['template', 'selector', 'completions', 'completionMode'] as const) {
      if (!sameJson(ns[key], os[key]))
        causes.push(immutable(`spec.${key}`, key === 'template' ? '{...}' : ns[key]));
    }
  }
  causes.push(...rbacUpdateCauses(next, old));
  if (causes.length > 0) throw invalid(rt.kind, rt.group, next.metadata.name ?? '', causes);
}
