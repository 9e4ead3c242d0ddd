import { PullSecretError } from '../errors/index.js';
import { describeHidden, quoteIdentifier } from './identifiers.js';
import { isValidRegistryKey } from './registry-key.js';
import { describeJsonProblem, parseStrictJson } from './strict-json.js';

/** A pull secret that passed validation. `raw` holds the bytes exactly as given. */
interface ValidPullSecret {
  raw: Buffer;
  /** Registry keys, safe to log. */
  registries: string[];
  /**
   * The strict parser's value of `raw` (a credential: never logged), for later steps on the same
   * bytes (the Kubernetes manifest's fingerprint) so they need not parse them again.
   */
  document: unknown;
}

/** Limits that depend on the configured target. */
export interface ValidateOptions {
  /** Largest accepted payload in bytes (GCP Secret Manager: 65536). */
  maxBytes: number;
  /** Name of the target for the size message, e.g. `gcp store`. */
  targetName: string;
}

const PREFIX = 'invalid pull secret format';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function invalid(
  detail: string,
  code: 'PULL_SECRET_INVALID' | 'PAYLOAD_TOO_LARGE' = 'PULL_SECRET_INVALID',
): never {
  throw new PullSecretError(code, `${PREFIX}: ${detail}`);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function decodeStrictBase64(value: string): string | undefined {
  if (value.length % 4 !== 0 || !BASE64.test(value)) return undefined;
  return Buffer.from(value, 'base64').toString('utf8');
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
/** C0 and C1 control characters and DEL: they forge log lines and no registry accepts them. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The decoded `user:password` of a base64 `auth`, or a reason it is unusable. */
function decodeAuth(auth: string): { ok: true; text: string } | { ok: false; reason: string } {
  if (auth.length % 4 !== 0 || !BASE64.test(auth)) return { ok: false, reason: 'auth is not valid base64' };
  let text: string;
  try {
    text = UTF8.decode(Buffer.from(auth, 'base64'));
  } catch {
    return { ok: false, reason: 'auth does not decode to UTF-8 text' };
  }
  if (CONTROL.test(text)) return { ok: false, reason: 'auth decodes to text with control characters' };
  return { ok: true, text };
}

/**
 * Parses a pull secret with the one strict parser (duplicate keys and deep nesting refused), so
 * every step that reads the document reaches the same verdict.
 * @throws PullSecretError PULL_SECRET_INVALID (`invalid pull secret format: ...`), never quoting input.
 */
export function parsePullSecretJson(text: string): unknown {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) invalid(describeJsonProblem(parsed.problem));
  return parsed.value;
}

/** Why a registry key is refused, without quoting it: it may hold `user:password@`. */
function describeBadKey(key: string, index: number): string {
  const hint = key.includes('@')
    ? '; a key must not hold credentials (userinfo before "@"): put them in "auth"'
    : '';
  return (
    `registry key #${index + 1} (${describeHidden(key)}) is not a registry host, host:port or ` +
    `host/namespace${hint}`
  );
}

function checkEntry(registry: string, entry: unknown): void {
  const where = `registry ${quoteIdentifier(registry)}`;
  if (!isObject(entry)) invalid(`${where}: entry must be an object`);
  const { auth, identitytoken, registrytoken, email } = entry;
  for (const [field, token] of [
    ['identitytoken', identitytoken],
    ['registrytoken', registrytoken],
  ] as const) {
    if (token === undefined) continue;
    if (typeof token !== 'string' || token.length === 0)
      invalid(`${where}: ${field} must be a non-empty string`);
    // Sent as a header or form value by the container runtime: a control character there forges lines.
    if (CONTROL.test(token)) invalid(`${where}: ${field} must not hold control characters`);
  }
  const hasToken = typeof identitytoken === 'string' || typeof registrytoken === 'string';
  if (auth === undefined) {
    if (!hasToken) invalid(`${where}: needs an "auth" (base64 of user:password) or an "identitytoken"`);
  } else {
    if (typeof auth !== 'string' || auth.length === 0)
      invalid(`${where}: auth must be a non-empty base64 string`);
    const decoded = decodeAuth(auth);
    if (!decoded.ok) invalid(`${where}: ${decoded.reason}`);
    const colon = decoded.text.indexOf(':');
    if (colon <= 0 || colon === decoded.text.length - 1)
      invalid(`${where}: auth must decode to user:password`);
  }
  if (email !== undefined && typeof email !== 'string') invalid(`${where}: email must be a string`);
  if (typeof email === 'string' && CONTROL.test(email))
    invalid(`${where}: email must not hold control characters`);
}

/**
 * Validates a dockerconfigjson / auth.json document against the target's limits.
 * Checks size first, so an oversized payload is never parsed. Duplicate keys anywhere, nesting
 * deeper than 64 levels, an `auth` that is not base64 of UTF-8 `user:password` without control
 * characters, and control characters in `email`, `identitytoken` or `registrytoken` are refused.
 *
 * @throws PullSecretError PULL_SECRET_INVALID or PAYLOAD_TOO_LARGE; the message starts with
 *   `invalid pull secret format:` and never contains credential bytes nor an invalid registry key.
 */
export function validatePullSecret(input: string | Uint8Array, options: ValidateOptions): ValidPullSecret {
  const raw = typeof input === 'string' ? Buffer.from(input, 'utf8') : Buffer.from(input);
  if (raw.length > options.maxBytes) {
    invalid(
      `${raw.length} bytes exceeds the ${options.targetName} limit of ${options.maxBytes} bytes`,
      'PAYLOAD_TOO_LARGE',
    );
  }
  const text = raw.toString('utf8');
  if (text.trim().length === 0) invalid('empty');
  const doc = parsePullSecretJson(text);
  if (!isObject(doc)) invalid('must be a JSON object');
  const { auths } = doc;
  if (!isObject(auths)) invalid('"auths" must be an object');
  const registries = Object.keys(auths);
  if (registries.length === 0) invalid('"auths" is empty');
  registries.forEach((registry, index) => {
    if (!isValidRegistryKey(registry)) invalid(describeBadKey(registry, index));
    checkEntry(registry, auths[registry]);
  });
  return { raw, registries, document: doc };
}
