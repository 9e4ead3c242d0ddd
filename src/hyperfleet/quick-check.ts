/**
 * Helpers of the fast paths that stand before the zod schemas (cluster-check.ts, report-check.ts).
 * Each only ever narrows: whatever they refuse goes to the schema, whose answer stands.
 */

import { TIMESTAMP_PATTERN } from './schemas.js';

/** An RFC 3339 timestamp as the schemas' own pattern accepts it (tested from its start, whatever its `lastIndex` was). */
export function isTimestamp(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  TIMESTAMP_PATTERN.lastIndex = 0;
  return TIMESTAMP_PATTERN.test(value);
}

/** A plain object as JSON.parse makes it (not an array, no prototype tricks, no symbol keys). */
export function isPlainRecord(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || Object.getOwnPropertySymbols(v).length > 0)
    return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A shallow copy of a plain record whose every value passes `check`; `undefined` otherwise or for a `__proto__` key. */
export function copyRecord(
  v: unknown,
  check: (value: unknown) => boolean = () => true,
): Record<string, unknown> | undefined {
  if (!isPlainRecord(v)) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v)) {
    const value = v[key];
    if (key === '__proto__' || !check(value)) return undefined;
    out[key] = value;
  }
  return out;
}
