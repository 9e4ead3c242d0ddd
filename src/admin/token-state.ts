import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { PullSecretError } from '../errors/index.js';

/**
 * Bytes of randomness in an admin token, as in OpenShift's Machine Config Server token
 * (`dd if=/dev/urandom bs=32 count=1 | base64`; openshift/enhancements, machine-config/auth-token.md).
 */
const TOKEN_BYTES = 32;

/** One admin token and when it was generated (epoch ms). */
interface TokenRecord {
  readonly token: string;
  readonly generatedAt: number;
}

/** What the token storage holds: the current token and, after a rotation, the previous one. */
export interface TokenState {
  readonly current: TokenRecord;
  readonly previous?: TokenRecord;
}

/** Which slot a presented token matched. */
export type TokenSlot = 'current' | 'previous';

/** A new token: 32 random bytes, base64 (44 characters). */
export function newToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64');
}

/** A first state with a fresh current token generated at `now`. */
export function initialState(now: number): TokenState {
  return { current: { token: newToken(), generatedAt: now } };
}

/** The state after a rotation at `now`: a new current token; the old current becomes the previous. */
export function rotatedState(state: TokenState, now: number): TokenState {
  return { current: { token: newToken(), generatedAt: now }, previous: state.current };
}

/**
 * True once the current token has lived half its lifetime (the HyperShift ignition server rule): the
 * previous token then keeps working for the other half, so whoever holds it has that long to re-read.
 */
export function rotationDue(state: TokenState, now: number, lifetimeMs: number): boolean {
  return now - state.current.generatedAt >= lifetimeMs / 2;
}

/**
 * The previous token's grace ends when its own lifetime does (generation time + lifetime): the rest
 * of its life, about half a lifetime after the rotation. The current token is always accepted.
 */
export function previousAccepted(state: TokenState, now: number, lifetimeMs: number): boolean {
  return state.previous !== undefined && now < state.previous.generatedAt + lifetimeMs;
}

const BASE64_TOKEN = /^[A-Za-z0-9+/]{43}=$/;
const recordSchema = z
  .object({ token: z.string().regex(BASE64_TOKEN), generatedAt: z.string().datetime() })
  .strict();
const fileSchema = z.object({ current: recordSchema, previous: recordSchema.optional() }).strict();

/** The JSON form kept in a token file (and its tests): ISO times, base64 tokens. */
export function serializeTokenState(state: TokenState): string {
  const record = (r: TokenRecord) => ({ token: r.token, generatedAt: new Date(r.generatedAt).toISOString() });
  return `${JSON.stringify({ current: record(state.current), ...(state.previous ? { previous: record(state.previous) } : {}) }, null, 2)}\n`;
}

/**
 * Parses a token state from its JSON form. The error never quotes the content: it holds tokens.
 * @throws CONFIG_INVALID naming `where` and the field paths at fault
 */
export function parseTokenState(text: string, where: string): TokenState {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new PullSecretError('CONFIG_INVALID', `the admin token ${where} is not JSON; ${fixHint(where)}`);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const paths = [...new Set(parsed.error.issues.map((i) => i.path.join('.') || '(root)'))].join(', ');
    throw new PullSecretError(
      'CONFIG_INVALID',
      `the admin token ${where} is malformed (at ${paths}); ${fixHint(where)}`,
    );
  }
  return fromRecords(parsed.data.current, parsed.data.previous);
}

/** How to mend a token state that does not parse: every command that reads it (rotate too) fails until then. */
function fixHint(where: string): string {
  return (
    'it must hold {"current":{"token":BASE64,"generatedAt":ISO-8601 time},"previous":{...}} (previous optional); ' +
    `correct the ${where}, or delete it and a new token is generated (clients need the new one)`
  );
}

/** Builds a state from stored records (ISO times). @throws CONFIG_INVALID for a token or time that does not fit */
export function fromRecords(
  current: { token: string; generatedAt: string },
  previous?: { token: string; generatedAt: string },
): TokenState {
  const record = (r: { token: string; generatedAt: string }, slot: string): TokenRecord => {
    const at = Date.parse(r.generatedAt);
    if (!BASE64_TOKEN.test(r.token) || Number.isNaN(at))
      throw new PullSecretError(
        'CONFIG_INVALID',
        `the ${slot} admin token or its generation time is malformed`,
      );
    return { token: r.token, generatedAt: at };
  };
  return {
    current: record(current, 'current'),
    ...(previous ? { previous: record(previous, 'previous') } : {}),
  };
}
