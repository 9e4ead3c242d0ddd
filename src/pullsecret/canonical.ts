import { createHash } from 'node:crypto';
import { parseStrictJson } from './strict-json.js';

/**
 * Canonical form of a JSON document: object keys sorted recursively, no insignificant whitespace.
 * Two pull secrets that differ only in formatting or key order have the same canonical form, so
 * re-sending the same secret never creates a new version.
 */
export function canonicalize(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    // No prototype: a "__proto__" key is then an ordinary property (assigning it on `{}` would set
    // the prototype and drop the key from the form), and plain assignment is all it takes.
    const out = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/**
 * Canonical form of raw pull secret bytes, or `undefined` when the strict parser validation uses
 * refuses them (not JSON, duplicate keys, too deep): then only a byte-for-byte comparison can say
 * they are equal.
 */
export function canonicalizeBytes(data: Uint8Array): string | undefined {
  const parsed = parseStrictJson(Buffer.from(data).toString('utf8'));
  return parsed.ok ? canonicalize(parsed.value) : undefined;
}

/** SHA-256 hex of the canonical form (or of the raw bytes when they are not JSON). Safe to log. */
export function fingerprint(data: Uint8Array): string {
  const canonical = canonicalizeBytes(data);
  return createHash('sha256')
    .update(canonical ?? Buffer.from(data))
    .digest('hex');
}

/** `fingerprint` of a document already parsed (saves a second parse of the same bytes). */
export function fingerprintParsed(value: unknown): string {
  return createHash('sha256').update(canonicalize(value)).digest('hex');
}

/** True when two payloads are the same pull secret: equal bytes or equal canonical form. */
export function sameContent(a: Uint8Array, b: Uint8Array): boolean {
  if (Buffer.from(a).equals(Buffer.from(b))) return true;
  const ca = canonicalizeBytes(a);
  return ca !== undefined && ca === canonicalizeBytes(b);
}
