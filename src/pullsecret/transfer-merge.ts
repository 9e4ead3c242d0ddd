import { PullSecretError } from '../errors/index.js';
import { canonicalize } from './canonical.js';
import { describeHidden, quoteIdentifier } from './identifiers.js';
import { isValidRegistryKey } from './registry-key.js';
import { describeJsonProblem, parseStrictJson } from './strict-json.js';
import { isObject, validatePullSecret, type ValidateOptions } from './validate.js';

/**
 * The merge of an ownership transfer's pull secret into a cluster's current one (docs/account-service.md).
 * Pure: no I/O, no clock.
 */
export interface TransferMerge {
  /** False when the merged document has the current one's canonical form: nothing to write. */
  changed: boolean;
  /** The merged pull secret, canonically serialized (sorted keys, no whitespace); valid for the target. */
  data: Buffer;
  /** Registries the transfer named whose entry changed (safe to log: validated registry keys). */
  replaced: string[];
  /** Registries the transfer added. */
  added: string[];
}

const PREFIX = 'transferred pull secret';

function refuse(detail: string): never {
  throw new PullSecretError('PULL_SECRET_INVALID', `${PREFIX} refused: ${detail}`);
}

/** Sets an own property, also for `__proto__` (a plain assignment would replace the prototype). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Reads the transferred document's `auths` without requiring a complete entry: merging may complete it. */
function transferredAuths(transferred: string | Uint8Array): Record<string, unknown> {
  const text = typeof transferred === 'string' ? transferred : Buffer.from(transferred).toString('utf8');
  if (text.trim() === '') refuse('empty');
  const parsed = parseStrictJson(text);
  if (!parsed.ok) refuse(describeJsonProblem(parsed.problem));
  if (!isObject(parsed.value)) refuse('must be a JSON object');
  const { auths } = parsed.value;
  if (!isObject(auths)) refuse('"auths" must be an object');
  const keys = Object.keys(auths);
  if (keys.length === 0) refuse('"auths" is empty');
  keys.forEach((key, index) => {
    // Not quoted: a refused key may carry `user:pass@`.
    if (!isValidRegistryKey(key)) refuse(`registry key #${index + 1} (${describeHidden(key)}) is not a registry host, host:port or host/namespace`);
    const entry = auths[key];
    if (entry !== null && !isObject(entry)) refuse(`registry ${quoteIdentifier(key)}: entry must be an object`);
  });
  return auths;
}

/**
 * Merges `transferred` (the new owner's pull secret) into `current` by the transfer rules:
 * - the transfer is authoritative for the registries it names: their fields replace the current
 *   ones field by field, and fields it omits (e.g. `email`) are kept;
 * - registries it adds are added; registries it does not name are never removed;
 * - an explicit JSON `null` (an entry or a field) never deletes: the current value is kept;
 * - top-level keys other than `auths` come from `current` (the transfer's own are ignored);
 * - any difference counts as a change (`auth`, `email`, `username`, `password`, `identitytoken`,
 *   `registrytoken`, unknown fields), compared on the canonical form, so key order never does.
 *
 * `current` must be a valid pull secret. The merged result is validated against `limits`
 * (completeness of every entry, size), so a transfer that would leave an entry unusable is refused
 * as a whole and nothing is to be written.
 *
 * @throws PullSecretError PULL_SECRET_INVALID (current or transferred or merged document invalid,
 *   messages start with `invalid pull secret format:` or `transferred pull secret refused:`) or
 *   PAYLOAD_TOO_LARGE; messages never hold credential bytes.
 */
export function mergeTransferredPullSecret(current: string | Uint8Array, transferred: string | Uint8Array, limits: ValidateOptions): TransferMerge {
  const currentDoc = parseValid(current, limits);
  const incoming = transferredAuths(transferred);
  const currentAuths = currentDoc.auths as Record<string, unknown>;

  const mergedAuths: Record<string, unknown> = {};
  for (const key of Object.keys(currentAuths)) setOwn(mergedAuths, key, currentAuths[key]);
  const replaced: string[] = [];
  const added: string[] = [];
  for (const key of Object.keys(incoming)) {
    const entry = incoming[key];
    const before = Object.prototype.hasOwnProperty.call(currentAuths, key) ? (currentAuths[key] as Record<string, unknown>) : undefined;
    if (entry === null || !isObject(entry)) continue;
    const merged: Record<string, unknown> = {};
    for (const field of Object.keys(before ?? {})) setOwn(merged, field, before?.[field]);
    for (const field of Object.keys(entry)) {
      if (entry[field] !== null) setOwn(merged, field, entry[field]);
    }
    if (before === undefined) {
      // A new registry named only with nulls adds nothing.
      if (Object.keys(merged).length === 0) continue;
      added.push(key);
    } else if (canonicalize(merged) !== canonicalize(before)) {
      replaced.push(key);
    }
    setOwn(mergedAuths, key, merged);
  }

  const mergedDoc: Record<string, unknown> = {};
  for (const key of Object.keys(currentDoc)) setOwn(mergedDoc, key, key === 'auths' ? mergedAuths : currentDoc[key]);
  const data = Buffer.from(canonicalize(mergedDoc), 'utf8');
  try {
    validatePullSecret(data, limits);
  } catch (err) {
    if (err instanceof PullSecretError) throw new PullSecretError(err.code, `${PREFIX} refused: the merged result is not valid (${err.message})`);
    throw err;
  }
  return { changed: replaced.length + added.length > 0, data, replaced: replaced.sort(), added: added.sort() };
}

function parseValid(input: string | Uint8Array, limits: ValidateOptions): Record<string, unknown> {
  const { raw } = validatePullSecret(input, limits);
  const parsed = parseStrictJson(raw.toString('utf8'));
  // validatePullSecret accepted these bytes with the same parser, so this holds.
  if (!parsed.ok || !isObject(parsed.value)) throw new PullSecretError('INTERNAL', 'validated pull secret did not parse');
  return parsed.value;
}
