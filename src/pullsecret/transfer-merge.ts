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
  /** Entries whose credential the one-credential rule settled, and how (sorted by registry). */
  credentials: Array<{ registry: string; rule: CredentialRule }>;
}

/**
 * How a merged entry keeps exactly one credential (registries read `auth` before `username`/`password`):
 * - `auth-from-username-password`: the transfer gave `username`/`password` without `auth`, so `auth`
 *   becomes the base64 of the merged `username:password` (a half the transfer and the entry lack is
 *   the current `auth`'s half);
 * - `stale-username-password-removed`: the transfer gave `auth`, so the current `username`/`password`
 *   it did not give are removed.
 */
type CredentialRule = 'auth-from-username-password' | 'stale-username-password-removed';

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
    if (!isValidRegistryKey(key))
      refuse(
        `registry key #${index + 1} (${describeHidden(key)}) is not a registry host, host:port or host/namespace`,
      );
    const entry = auths[key];
    if (entry !== null && !isObject(entry))
      refuse(`registry ${quoteIdentifier(key)}: entry must be an object`);
  });
  return auths;
}

/**
 * Merges `transferred` (the new owner's pull secret) into `current` by the transfer rules:
 * - the transfer is authoritative for the registries it names: their fields replace the current
 *   ones field by field, and fields it omits (e.g. `email`) are kept;
 * - registries it adds are added; registries it does not name are never removed;
 * - an explicit JSON `null` (an entry or a field) never deletes: the current value is kept;
 * - each entry it names keeps one credential (`CredentialRule`): its `username`/`password` re-encode
 *   `auth`, its `auth` removes the current `username`/`password`;
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
export function mergeTransferredPullSecret(
  current: string | Uint8Array,
  transferred: string | Uint8Array,
  limits: ValidateOptions,
): TransferMerge {
  const currentDoc = parseValid(current, limits);
  const incoming = transferredAuths(transferred);
  const currentAuths = currentDoc.auths as Record<string, unknown>;

  const mergedAuths: Record<string, unknown> = {};
  for (const key of Object.keys(currentAuths)) setOwn(mergedAuths, key, currentAuths[key]);
  const replaced: string[] = [];
  const added: string[] = [];
  const credentials: TransferMerge['credentials'] = [];
  for (const key of Object.keys(incoming)) {
    const entry = incoming[key];
    const before = Object.prototype.hasOwnProperty.call(currentAuths, key)
      ? (currentAuths[key] as Record<string, unknown>)
      : undefined;
    if (entry === null || !isObject(entry)) continue;
    const merged: Record<string, unknown> = {};
    for (const field of Object.keys(before ?? {})) setOwn(merged, field, before?.[field]);
    for (const field of Object.keys(entry)) {
      if (entry[field] !== null) setOwn(merged, field, entry[field]);
    }
    const rule = settleCredential(key, entry, merged);
    if (rule !== undefined) credentials.push({ registry: key, rule });
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
  for (const key of Object.keys(currentDoc))
    setOwn(mergedDoc, key, key === 'auths' ? mergedAuths : currentDoc[key]);
  const data = Buffer.from(canonicalize(mergedDoc), 'utf8');
  try {
    validatePullSecret(data, limits);
  } catch (err) {
    if (err instanceof PullSecretError)
      throw new PullSecretError(
        err.code,
        `${PREFIX} refused: the merged result is not valid (${err.message})`,
      );
    throw err;
  }
  credentials.sort((a, b) => (a.registry < b.registry ? -1 : a.registry > b.registry ? 1 : 0));
  return {
    changed: replaced.length + added.length > 0,
    data,
    replaced: replaced.sort(),
    added: added.sort(),
    credentials,
  };
}

/**
 * Applies the one-credential rule (`CredentialRule`) to `merged`, the entry after the field merge.
 * @throws PullSecretError PULL_SECRET_INVALID when the transfer gives half a pair the entry cannot complete.
 */
function settleCredential(
  registry: string,
  entry: Record<string, unknown>,
  merged: Record<string, unknown>,
): CredentialRule | undefined {
  const gives = (field: string) => entry[field] !== undefined && entry[field] !== null;
  const pair = ['username', 'password'];
  if (gives('auth')) {
    const stale = pair.filter((field) => !gives(field) && field in merged);
    for (const field of stale) delete merged[field];
    return stale.length > 0 ? 'stale-username-password-removed' : undefined;
  }
  if (!pair.some(gives)) return undefined;
  // Half a pair is completed from the entry's fields, then from the current `auth` it replaces.
  const current = typeof merged.auth === 'string' ? Buffer.from(merged.auth, 'base64').toString('utf8') : '';
  const colon = current.indexOf(':');
  const username =
    typeof merged.username === 'string' ? merged.username : colon > 0 ? current.slice(0, colon) : undefined;
  const password =
    typeof merged.password === 'string' ? merged.password : colon > 0 ? current.slice(colon + 1) : undefined;
  if (username === undefined || password === undefined)
    refuse(
      `registry ${quoteIdentifier(registry)}: a username needs its password (and a password its username)`,
    );
  setOwn(merged, 'auth', Buffer.from(`${username}:${password}`, 'utf8').toString('base64'));
  return 'auth-from-username-password';
}

function parseValid(input: string | Uint8Array, limits: ValidateOptions): Record<string, unknown> {
  const { raw } = validatePullSecret(input, limits);
  const parsed = parseStrictJson(raw.toString('utf8'));
  // validatePullSecret accepted these bytes with the same parser, so this holds.
  if (!parsed.ok || !isObject(parsed.value))
    throw new PullSecretError('INTERNAL', 'validated pull secret did not parse');
  return parsed.value;
}
