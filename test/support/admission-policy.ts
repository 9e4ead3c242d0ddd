// What the API server does with a ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1) for one
// request, with the CEL library the adapter uses (@marcbachmann/cel-js): match the resource rules,
// then the matchConditions, then every validation. An expression that fails to evaluate is handled
// by failurePolicy (Fail: refused; Ignore: as if the policy did not match).
import { parse } from '@marcbachmann/cel-js';
import type { V1ValidatingAdmissionPolicy } from '@kubernetes/client-node';

/** The parts of an admission request the policies here look at. */
export interface AdmissionRequest {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  username: string;
  groups?: string[];
  resource: { group: string; version: string; resource: string };
  namespace?: string;
  name?: string;
  /** The object as it will be (CREATE, UPDATE); absent (null) for DELETE. */
  object?: unknown;
  /** The object as it is (UPDATE, DELETE); absent (null) for CREATE. */
  oldObject?: unknown;
}

export interface AdmissionVerdict {
  /** The policy applied to the request (resource rules and matchConditions). */
  matched: boolean;
  allowed: boolean;
  /** Why it was refused: the failing validation's message, or the evaluation error. */
  message?: string;
}

const matches = (list: string[] | undefined, value: string) =>
  (list ?? []).some((v) => v === '*' || v === value);

/** Evaluates `expression` to a boolean; anything else is an evaluation error. */
function check(expression: string, context: Record<string, unknown>): boolean {
  const value: unknown = parse(expression)(context);
  if (typeof value !== 'boolean') throw new Error(`expression did not evaluate to a boolean: ${expression}`);
  return value;
}

/** The verdict of `policy` (bound with validationActions Deny) on `request`. */
export function admit(policy: V1ValidatingAdmissionPolicy, request: AdmissionRequest): AdmissionVerdict {
  const spec = policy.spec ?? {};
  const { group, version, resource } = request.resource;
  const ruleMatches = (spec.matchConstraints?.resourceRules ?? []).some(
    (r) =>
      matches(r.apiGroups, group) &&
      matches(r.apiVersions, version) &&
      matches(r.resources, resource) &&
      matches(r.operations, request.operation),
  );
  if (!ruleMatches) return { matched: false, allowed: true };
  const context: Record<string, unknown> = {
    object: request.object ?? null,
    oldObject: request.oldObject ?? null,
    request: {
      operation: request.operation,
      userInfo: { username: request.username, groups: request.groups ?? [] },
      resource: request.resource,
      namespace: request.namespace ?? '',
      name: request.name ?? '',
    },
  };
  const failure = (err: unknown): AdmissionVerdict =>
    spec.failurePolicy === 'Ignore'
      ? { matched: false, allowed: true }
      : { matched: true, allowed: false, message: `evaluation error: ${(err as Error).message}` };
  try {
    if (!(spec.matchConditions ?? []).every((c) => check(c.expression, context)))
      return { matched: false, allowed: true };
  } catch (err) {
    return failure(err);
  }
  for (const validation of spec.validations ?? []) {
    try {
      if (!check(validation.expression, context))
        return { matched: true, allowed: false, message: validation.message ?? validation.expression };
    } catch (err) {
      return failure(err);
    }
  }
  return { matched: true, allowed: true };
}
