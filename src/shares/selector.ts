import type { LabelSelector } from '../kube/share-types.js';

/**
 * Label selector matching (metav1.LabelSelector semantics): every `matchLabels` pair and every
 * `matchExpressions` requirement must hold; an empty selector matches every object.
 */
export function matchesSelector(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (labels[key] !== value) return false;
  for (const req of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, req.key);
    const value = labels[req.key];
    const values = req.values ?? [];
    const ok =
      req.operator === 'In'
        ? has && values.includes(value ?? '')
        : req.operator === 'NotIn'
          ? !has || !values.includes(value ?? '')
          : req.operator === 'Exists'
            ? has
            : !has;
    if (!ok) return false;
  }
  return true;
}
