import { isClusterId, isKubernetesName, quoteIdentifier } from '../pullsecret/identifiers.js';
import type { LabelSelector, ShareSpec } from '../kube/share-types.js';
import { isSourceKind, SOURCE_KINDS } from './source-kinds.js';

/**
 * Validation of a PullSecretShare spec beyond what the CRD schema checks: names that Kubernetes
 * accepts, a well-formed selector, a target the source kind allows. Pure; messages quote only names.
 */

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];
/** Names ending like this are the clusters' own Secrets (drift repair watches them): never a copy's. */
const RESERVED_SUFFIX = '-pull-secret';

/** A refused share: `reason` for the Ready condition, `message` for people. */
interface ShareSpecProblem {
  reason: 'InvalidSpec';
  message: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A list of distinct Kubernetes names of at most `max` characters (a DNS-1123 label when ≤ 63). */
function names(value: unknown, field: string, max: number, problems: string[]): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    problems.push(`${field} must be a list of names`);
    return undefined;
  }
  const out: string[] = [];
  for (const item of value) {
    if (typeof item !== 'string' || !isKubernetesName(item, max))
      problems.push(`${field}: ${quoteIdentifier(String(item))} is not a valid name`);
    else if (!out.includes(item)) out.push(item);
  }
  return out;
}

function selector(value: unknown, problems: string[]): LabelSelector | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) {
    problems.push('spec.consumers.namespaceSelector must be a label selector');
    return undefined;
  }
  const out: LabelSelector = {};
  if (value.matchLabels !== undefined) {
    if (!isRecord(value.matchLabels) || Object.values(value.matchLabels).some((v) => typeof v !== 'string'))
      problems.push('spec.consumers.namespaceSelector.matchLabels must map strings to strings');
    else out.matchLabels = value.matchLabels as Record<string, string>;
  }
  if (value.matchExpressions !== undefined) {
    const exprs = Array.isArray(value.matchExpressions) ? value.matchExpressions : [];
    out.matchExpressions = [];
    for (const e of exprs) {
      const expr = isRecord(e) ? e : {};
      const operator = String(expr.operator);
      const values = Array.isArray(expr.values)
        ? expr.values.filter((v): v is string => typeof v === 'string')
        : [];
      if (typeof expr.key !== 'string' || !OPERATORS.includes(operator)) {
        problems.push(
          `spec.consumers.namespaceSelector.matchExpressions: each needs a key and an operator of ` +
            `${OPERATORS.join(', ')}`,
        );
        continue;
      }
      if ((operator === 'In' || operator === 'NotIn') && values.length === 0)
        problems.push(`spec.consumers.namespaceSelector.matchExpressions: ${operator} needs values`);
      out.matchExpressions.push({ key: expr.key, operator: operator as 'In', values });
    }
  }
  return out;
}

/** Checks a share's spec and returns it typed, or the problem to report in its status. */
export function parseShareSpec(
  spec: unknown,
  shareName: string,
): { spec: ShareSpec } | { problem: ShareSpecProblem } {
  const problems: string[] = [];
  const s = isRecord(spec) ? spec : {};
  const source = isRecord(s.source) ? s.source : {};
  const consumers = isRecord(s.consumers) ? s.consumers : {};
  const target = isRecord(s.target) ? s.target : {};
  const clusterId = typeof source.clusterId === 'string' ? source.clusterId : '';
  if (!isClusterId(clusterId))
    problems.push(`spec.source.clusterId ${quoteIdentifier(clusterId)} is not a cluster id`);
  const kind = source.kind ?? 'pullSecret';
  if (!isSourceKind(kind))
    problems.push(`spec.source.kind must be ${Object.keys(SOURCE_KINDS).join(' or ')}`);
  const namespaces = names(consumers.namespaces, 'spec.consumers.namespaces', 63, problems);
  const namespaceSelector = selector(consumers.namespaceSelector, problems);
  const serviceAccounts = names(
    consumers.serviceAccounts,
    'spec.consumers.serviceAccounts',
    253,
    problems,
  ) ?? ['default'];
  if (namespaces === undefined && namespaceSelector === undefined)
    problems.push('spec.consumers names no namespaces and no namespaceSelector');
  const secretName =
    target.secretName === undefined
      ? shareName
      : typeof target.secretName === 'string'
        ? target.secretName
        : '';
  if (!isKubernetesName(secretName))
    problems.push(`spec.target.secretName ${quoteIdentifier(secretName)} is not a Secret name`);
  else if (secretName.endsWith(RESERVED_SUFFIX))
    problems.push(
      `the copy's name ${quoteIdentifier(secretName)} ends with ${RESERVED_SUFFIX}, reserved for the ` +
        `clusters' own Secrets: set spec.target.secretName`,
    );
  if (target.imagePullSecrets !== undefined && typeof target.imagePullSecrets !== 'boolean')
    problems.push('spec.target.imagePullSecrets must be true or false');
  else if (target.imagePullSecrets === true && isSourceKind(kind) && !SOURCE_KINDS[kind].imagePullSecrets)
    problems.push(
      `spec.target.imagePullSecrets: a source of kind ${kind} is no registry credential; ` +
        `only pullSecret copies can be image pull secrets`,
    );
  if (shareName.length > 63)
    problems.push(
      `the share's name ${quoteIdentifier(shareName)} is longer than 63 characters (it labels every copy)`,
    );
  if (problems.length > 0 || !isSourceKind(kind))
    return { problem: { reason: 'InvalidSpec', message: problems.join('; ') } };
  return {
    spec: {
      source: { clusterId, kind },
      consumers: { namespaces, namespaceSelector, serviceAccounts },
      target: { secretName, imagePullSecrets: target.imagePullSecrets === true },
    },
  };
}
