import { PullSecretError } from '../errors/index.js';
import { quoteIdentifier } from './identifiers.js';
import { isValidRegistryKey } from './registry-key.js';

/** A pull secret that passed validation. `raw` holds the bytes exactly as given. */
export interface ValidPullSecret {
  raw: Buffer;
  /** Registry keys, safe to log. */
  registries: string[];
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

function invalid(detail: string, code: 'PULL_SECRET_INVALID' | 'PAYLOAD_TOO_LARGE' = 'PULL_SECRET_INVALID'): never {
  throw new PullSecretError(code, `${PREFIX}: ${detail}`);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function decodeStrictBase64(value: string): string | undefined {
  if (value.length % 4 !== 0 || !BASE64.test(value)) return undefined;
  return Buffer.from(value, 'base64').toString('utf8');
}

/**
 * The position JSON.parse reports, without its message: on Node 20 that message quotes the input,
 * which here is a credential.
 */
function parseErrorPosition(err: unknown): string {
  const match = err instanceof Error ? /position (\d+)/.exec(err.message) : null;
  return match ? ` (at byte ${match[1]})` : '';
}

function checkEntry(registry: string, entry: unknown): void {
  const where = `registry ${quoteIdentifier(registry)}`;
  if (!isObject(entry)) invalid(`${where}: entry must be an object`);
  const { auth, identitytoken, registrytoken, email } = entry;
  for (const [field, token] of [['identitytoken', identitytoken], ['registrytoken', registrytoken]] as const) {
    if (token === undefined) continue;
    if (typeof token !== 'string' || token.length === 0) invalid(`${where}: ${field} must be a non-empty string`);
  }
  const hasToken = typeof identitytoken === 'string' || typeof registrytoken === 'string';
  if (auth === undefined) {
    if (!hasToken) invalid(`${where}: needs an "auth" (base64 of user:password) or an "identitytoken"`);
  } else {
    if (typeof auth !== 'string' || auth.length === 0) invalid(`${where}: auth must be a non-empty base64 string`);
    const decoded = decodeStrictBase64(auth);
    if (decoded === undefined) invalid(`${where}: auth is not valid base64`);
    const colon = decoded.indexOf(':');
    if (colon <= 0 || colon === decoded.length - 1) invalid(`${where}: auth must decode to user:password`);
  }
  if (email !== undefined && typeof email !== 'string') invalid(`${where}: email must be a string`);
}

/**
 * Validates a dockerconfigjson / auth.json document (design §2) against the target's limits.
 * Checks size first, so an oversized payload is never parsed.
 *
 * @throws PullSecretError PULL_SECRET_INVALID or PAYLOAD_TOO_LARGE; the message starts with
 *   `invalid pull secret format:` and never contains credential bytes.
 */
export function validatePullSecret(input: string | Uint8Array, options: ValidateOptions): ValidPullSecret {
  const raw = typeof input === 'string' ? Buffer.from(input, 'utf8') : Buffer.from(input);
  if (raw.length > options.maxBytes) {
    invalid(`${raw.length} bytes exceeds the ${options.targetName} limit of ${options.maxBytes} bytes`, 'PAYLOAD_TOO_LARGE');
  }
  const text = raw.toString('utf8');
  if (text.trim().length === 0) invalid('empty');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    invalid(`not valid JSON${parseErrorPosition(err)}`);
  }
  if (!isObject(doc)) invalid('must be a JSON object');
  const { auths } = doc;
  if (!isObject(auths)) invalid('"auths" must be an object');
  const registries = Object.keys(auths);
  if (registries.length === 0) invalid('"auths" is empty');
  for (const registry of registries) {
    if (!isValidRegistryKey(registry)) {
      invalid(`registry key ${quoteIdentifier(registry)} is not a registry host, host:port or host/namespace`);
    }
    checkEntry(registry, auths[registry]);
  }
  return { raw, registries };
}
