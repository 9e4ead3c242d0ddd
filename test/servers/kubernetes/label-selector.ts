import { badRequest } from './status.js';

/**
 * Label and field selectors as the API server parses them: comma-separated requirements, all of
 * which must hold. Labels support `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`;
 * fields support `metadata.name` and `metadata.namespace` with `=`, `==`, `!=`.
 */

type Requirement =
  | { op: 'eq' | 'neq'; key: string; value: string }
  | { op: 'in' | 'notin'; key: string; values: string[] }
  | { op: 'exists' | 'notexists'; key: string };

export type Selector = (labels: Readonly<Record<string, string>> | undefined) => boolean;

/** Splits on commas that are not inside `( … )`. */
function splitRequirements(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

const KEY = String.raw`[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?`;
const VALUE = String.raw`(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?`;
const SET = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^)]*)\\)$`);
const EQUALITY = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`);
const EXISTS = new RegExp(`^(!?)\\s*(${KEY})$`);

function parseRequirement(text: string): Requirement {
  const set = SET.exec(text);
  if (set) {
    const values = (set[4] ?? '').split(',').map((v) => v.trim());
    if (values.some((v) => !new RegExp(`^${VALUE}$`).test(v)))
      throw badRequest(`unable to parse requirement: invalid label value in "${text}"`);
    return { op: set[3] === 'in' ? 'in' : 'notin', key: set[1] ?? '', values };
  }
  const eq = EQUALITY.exec(text);
  if (eq) return { op: eq[3] === '!=' ? 'neq' : 'eq', key: eq[1] ?? '', value: eq[4] ?? '' };
  const exists = EXISTS.exec(text);
  if (exists) return { op: exists[1] === '!' ? 'notexists' : 'exists', key: exists[2] ?? '' };
  throw badRequest(
    `unable to parse requirement: found '${text}', expected: in, notin, =, ==, !=, or identifier`,
  );
}

function matches(req: Requirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, req.key);
  const value = labels[req.key];
  switch (req.op) {
    case 'eq':
      return has && value === req.value;
    case 'neq':
      return !has || value !== req.value;
    case 'in':
      return has && req.values.includes(value ?? '');
    case 'notin':
      return !has || !req.values.includes(value ?? '');
    case 'exists':
      return has;
    case 'notexists':
      return !has;
  }
}

/**
 * Parses a `labelSelector` query value; an empty or missing selector matches everything.
 * @throws StatusError 400 BadRequest on syntax errors, as the API server does.
 */
export function parseLabelSelector(text: string | null | undefined): Selector {
  const reqs = splitRequirements(text ?? '').map(parseRequirement);
  return (labels) => reqs.every((r) => matches(r, labels ?? {}));
}

/**
 * Parses a `fieldSelector` query value over `metadata.name` / `metadata.namespace`.
 * @throws StatusError 400 BadRequest for other fields or syntax errors.
 */
export function parseFieldSelector(text: string | null | undefined): Selector {
  const reqs = splitRequirements(text ?? '').map((part) => {
    const m = /^(metadata\.name|metadata\.namespace)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m)
      throw badRequest(`"${part}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
    return { field: m[1] ?? '', negate: m[2] === '!=', value: m[3] ?? '' };
  });
  // The fields are passed in as a pseudo label map by the caller.
  return (fields) => reqs.every((r) => (fields?.[r.field] === r.value) !== r.negate);
}
