import type { IncomingMessage } from 'node:http';
import type { TokenSlot } from './token-state.js';

/** The realm in `WWW-Authenticate` (RFC 6750). */
const ADMIN_REALM = 'pull-secret-admin';

/** Anything that can tell which token slot a presented token matches (TokenManager). */
export interface TokenChecker {
  check(presented: string | undefined): TokenSlot | undefined;
}

/**
 * The token of an `Authorization: Bearer <token>` header, or undefined (no header, another scheme, a malformed one).
 */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined || header.length > 1024) return undefined;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  return match?.[1];
}

/** The `WWW-Authenticate` value for a refused request: `invalid_token` when a token was sent (RFC 6750 §3). */
export function challenge(tokenSent: boolean): string {
  return tokenSent ? `Bearer realm="${ADMIN_REALM}", error="invalid_token"` : `Bearer realm="${ADMIN_REALM}"`;
}

/** The client's address, for rate limiting and the audit line. */
export function clientAddress(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
}
