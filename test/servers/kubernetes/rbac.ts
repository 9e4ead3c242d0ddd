import type { StatusCause } from './status.js';
import { isRecord, type KubeObject } from './types.js';
import { invalidValue, required } from './validate-meta.js';

/**
 * The RBAC authorizer of the API server over the Roles, ClusterRoles, RoleBindings and
 * ClusterRoleBindings the test server stores: a request is allowed when a ClusterRoleBinding, or a
 * RoleBinding in the request's namespace, binds a subject matching the user or one of its groups
 * to a role with a rule that covers the verb, API group, resource (and subresource) and name.
 * Deny rules do not exist in RBAC. Members of `system:masters` are always allowed (kube-apiserver puts
 * the privileged-group authorizer before RBAC: kubernetes/kubernetes pkg/kubeapiserver/authorizer/config.go).
 * An aggregated ClusterRole has the rules of the ClusterRoles its `aggregationRule.clusterRoleSelectors`
 * select, as the aggregation controller writes them (pkg/controller/clusterroleaggregation).
 * Rule matching: kubernetes/kubernetes pkg/apis/rbac/v1/evaluation_helpers.go (`RuleAllows`).
 */

/** The group whose members every request is allowed to (`user.SystemPrivilegedGroup`). */
export const PRIVILEGED_GROUP = 'system:masters';

/** The attributes an authorizer decides on (a SubjectAccessReview's spec, flattened). */
export interface AccessRequest {
  user: string;
  groups: readonly string[];
  /** Resource requests; undefined for a non-resource request. */
  resource?: {
    verb: string;
    group: string;
    resource: string;
    subresource?: string;
    name?: string;
    /** Empty or undefined: a cluster-scoped request (only ClusterRoleBindings apply). */
    namespace?: string;
  };
  nonResource?: { verb: string; path: string };
}

/** The RBAC objects the evaluator reads. */
export interface RbacObjects {
  roles: readonly KubeObject[];
  roleBindings: readonly KubeObject[];
  clusterRoles: readonly KubeObject[];
  clusterRoleBindings: readonly KubeObject[];
}

export interface AccessDecision {
  allowed: boolean;
  /** Like the API server's: which binding of which role to which subject allowed it. */
  reason: string;
}

interface Rule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
  nonResourceURLs: string[];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function selects(selector: unknown, labels: Record<string, string> = {}): boolean {
  if (!isRecord(selector)) return false;
  const match = isRecord(selector.matchLabels) ? selector.matchLabels : {};
  const expressions = Array.isArray(selector.matchExpressions)
    ? (selector.matchExpressions as unknown[]).filter(isRecord)
    : [];
  return (
    Object.entries(match).every(([k, v]) => labels[k] === v) &&
    expressions.every((e) => {
      const key = String(e.key);
      const values = strings(e.values);
      const value = labels[key];
      if (e.operator === 'In') return value !== undefined && values.includes(value);
      if (e.operator === 'NotIn') return value === undefined || !values.includes(value);
      return e.operator === 'Exists' ? key in labels : !(key in labels);
    })
  );
}

/** The rules of a role: an aggregated ClusterRole's are those of the ClusterRoles it selects. */
function rulesOf(role: KubeObject | undefined, clusterRoles: readonly KubeObject[] = []): Rule[] {
  const aggregation = isRecord(role?.aggregationRule) ? role.aggregationRule : undefined;
  if (role !== undefined && aggregation !== undefined) {
    const selectors = Array.isArray(aggregation.clusterRoleSelectors)
      ? (aggregation.clusterRoleSelectors as unknown[])
      : [];
    const members = clusterRoles.filter(
      (r) => r.metadata.name !== role.metadata.name && selectors.some((s) => selects(s, r.metadata.labels)),
    );
    return members.flatMap((r) => rulesOf(r));
  }
  const rules = Array.isArray(role?.rules) ? (role.rules as unknown[]) : [];
  return rules.filter(isRecord).map((r) => ({
    verbs: strings(r.verbs),
    apiGroups: strings(r.apiGroups),
    resources: strings(r.resources),
    resourceNames: strings(r.resourceNames),
    nonResourceURLs: strings(r.nonResourceURLs),
  }));
}

const has = (list: readonly string[], value: string): boolean => list.includes('*') || list.includes(value);

function ruleAllows(rule: Rule, req: AccessRequest): boolean {
  if (req.resource !== undefined) {
    const r = req.resource;
    const combined = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
    const resourceMatches = rule.resources.some(
      (x) => x === '*' || x === combined || (r.subresource ? x === `*/${r.subresource}` : false),
    );
    const nameMatches =
      rule.resourceNames.length === 0 ||
      (r.name !== undefined && r.name !== '' && rule.resourceNames.includes(r.name));
    return has(rule.verbs, r.verb) && has(rule.apiGroups, r.group) && resourceMatches && nameMatches;
  }
  if (req.nonResource !== undefined) {
    const { verb, path } = req.nonResource;
    const pathMatches = rule.nonResourceURLs.some(
      (u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))),
    );
    return has(rule.verbs, verb) && pathMatches;
  }
  return false;
}

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

function subjectsOf(binding: KubeObject): Subject[] {
  const subjects = Array.isArray(binding.subjects) ? (binding.subjects as unknown[]) : [];
  return subjects.filter(isRecord).map((s) => ({
    kind: String(s.kind),
    name: String(s.name),
    namespace: typeof s.namespace === 'string' ? s.namespace : undefined,
  }));
}

function subjectMatches(subject: Subject, req: AccessRequest, bindingNamespace: string | undefined): boolean {
  switch (subject.kind) {
    case 'User':
      return subject.name === req.user;
    case 'Group':
      return req.groups.includes(subject.name);
    case 'ServiceAccount': {
      // An empty namespace is the binding's (pkg/registry/rbac/validation/rule.go `appliesToUser`).
      const namespace = subject.namespace || bindingNamespace || '';
      return namespace !== '' && req.user === `system:serviceaccount:${namespace}:${subject.name}`;
    }
    default:
      return false;
  }
}

function describeSubject(subject: Subject, bindingNamespace: string | undefined): string {
  return subject.kind === 'ServiceAccount'
    ? `ServiceAccount "${subject.name}/${subject.namespace || bindingNamespace || ''}"`
    : `${subject.kind} "${subject.name}"`;
}

function roleRefOf(binding: KubeObject): { kind: string; name: string } {
  const ref = isRecord(binding.roleRef) ? binding.roleRef : {};
  return { kind: String(ref.kind), name: String(ref.name) };
}

/**
 * Decides a request like the API server's RBAC authorizer. Pure: reads only `objects`.
 */
export function authorize(objects: RbacObjects, req: AccessRequest): AccessDecision {
  if (req.groups.includes(PRIVILEGED_GROUP)) return { allowed: true, reason: '' };
  const namespace = req.resource?.namespace || undefined;
  const candidates: { binding: KubeObject; namespace?: string }[] = objects.clusterRoleBindings.map(
    (binding) => ({ binding }),
  );
  if (namespace !== undefined) {
    for (const binding of objects.roleBindings)
      if (binding.metadata.namespace === namespace) candidates.push({ binding, namespace });
  }
  for (const { binding, namespace: bindingNs } of candidates) {
    const subject = subjectsOf(binding).find((s) => subjectMatches(s, req, bindingNs));
    if (subject === undefined) continue;
    const ref = roleRefOf(binding);
    const role =
      ref.kind === 'ClusterRole'
        ? objects.clusterRoles.find((r) => r.metadata.name === ref.name)
        : bindingNs !== undefined && ref.kind === 'Role'
          ? objects.roles.find((r) => r.metadata.namespace === bindingNs && r.metadata.name === ref.name)
          : undefined;
    if (!rulesOf(role, objects.clusterRoles).some((rule) => ruleAllows(rule, req))) continue;
    const bindingName =
      bindingNs === undefined
        ? `ClusterRoleBinding "${binding.metadata.name ?? ''}"`
        : `RoleBinding "${binding.metadata.name ?? ''}/${bindingNs}"`;
    return {
      allowed: true,
      reason: `RBAC: allowed by ${bindingName} of ${ref.kind} "${ref.name}" to ${describeSubject(subject, bindingNs)}`,
    };
  }
  return { allowed: false, reason: '' };
}

/** Validation causes of a Role / ClusterRole / RoleBinding / ClusterRoleBinding (the API server's rules, abridged). */
export function rbacCauses(obj: KubeObject): StatusCause[] {
  const causes: StatusCause[] = [];
  if (obj.kind === 'Role' || obj.kind === 'ClusterRole') {
    const rules = obj.rules;
    if (rules !== undefined && !Array.isArray(rules))
      causes.push(invalidValue('rules', rules, 'must be a list'));
    (Array.isArray(rules) ? (rules as unknown[]) : []).forEach((r, i) => {
      const rule = isRecord(r) ? r : {};
      if (strings(rule.verbs).length === 0)
        causes.push(required(`rules[${i}].verbs`, 'verbs must contain at least one value'));
      const nonResource = strings(rule.nonResourceURLs).length > 0;
      if (nonResource && obj.kind === 'Role')
        causes.push(
          invalidValue(
            `rules[${i}].nonResourceURLs`,
            rule.nonResourceURLs,
            'namespaced rules cannot apply to non-resource URLs',
          ),
        );
      if (!nonResource && strings(rule.apiGroups).length === 0)
        causes.push(required(`rules[${i}].apiGroups`, 'resource rules must supply at least one api group'));
      if (!nonResource && strings(rule.resources).length === 0)
        causes.push(required(`rules[${i}].resources`, 'resource rules must supply at least one resource'));
    });
  }
  if (obj.kind === 'RoleBinding' || obj.kind === 'ClusterRoleBinding') {
    const ref = isRecord(obj.roleRef) ? obj.roleRef : undefined;
    if (ref === undefined) causes.push(required('roleRef'));
    else {
      const kinds = obj.kind === 'RoleBinding' ? ['Role', 'ClusterRole'] : ['ClusterRole'];
      if (!kinds.includes(String(ref.kind)))
        causes.push({
          reason: 'FieldValueNotSupported',
          field: 'roleRef.kind',
          message: `Unsupported value: ${JSON.stringify(ref.kind)}: supported values: ${kinds.map((k) => `"${k}"`).join(', ')}`,
        });
      if (ref.apiGroup !== 'rbac.authorization.k8s.io')
        causes.push({
          reason: 'FieldValueNotSupported',
          field: 'roleRef.apiGroup',
          message: `Unsupported value: ${JSON.stringify(ref.apiGroup)}: supported values: "rbac.authorization.k8s.io"`,
        });
      if (typeof ref.name !== 'string' || ref.name === '') causes.push(required('roleRef.name'));
    }
    const subjects = Array.isArray(obj.subjects) ? (obj.subjects as unknown[]) : [];
    subjects.forEach((s, i) => {
      const subject = isRecord(s) ? s : {};
      if (typeof subject.name !== 'string' || subject.name === '')
        causes.push(required(`subjects[${i}].name`));
      if (!['User', 'Group', 'ServiceAccount'].includes(String(subject.kind))) {
        causes.push({
          reason: 'FieldValueNotSupported',
          field: `subjects[${i}].kind`,
          message: `Unsupported value: ${JSON.stringify(subject.kind)}: supported values: "ServiceAccount", "User", "Group"`,
        });
      }
      if (
        subject.kind === 'ServiceAccount' &&
        (typeof subject.namespace !== 'string' || subject.namespace === '') &&
        obj.kind === 'ClusterRoleBinding'
      )
        causes.push(required(`subjects[${i}].namespace`));
    });
  }
  return causes;
}

/** roleRef cannot change once set (the API server answers 422). */
export function rbacUpdateCauses(next: KubeObject, old: KubeObject): StatusCause[] {
  if (next.kind !== 'RoleBinding' && next.kind !== 'ClusterRoleBinding') return [];
  return JSON.stringify(next.roleRef) === JSON.stringify(old.roleRef)
    ? []
    : [{ reason: 'FieldValueInvalid', field: 'roleRef', message: 'Invalid value: cannot change roleRef' }];
}
