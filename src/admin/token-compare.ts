import { createHash, timingSafeEqual } from 'node:crypto';

/** SHA-256 of a token: a fixed 32-byte value whatever the token's length. */
export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * Compares a presented token with an expected one in constant time: both go through SHA-256 first,
 * so `timingSafeEqual` always compares 32 bytes and neither the length nor a common prefix of the
 * expected token shows in the time taken. Never throws (any string, even empty, is fine).
 */
export function tokensEqual(presented: string, expected: string): boolean {
  return timingSafeEqual(tokenDigest(presented), tokenDigest(expected));
}

/** Same as `tokensEqual`, with the presented token's digest computed once (it is checked against two slots). */
export function digestMatches(presentedDigest: Buffer, expected: string): boolean {
  return timingSafeEqual(presentedDigest, tokenDigest(expected));
}
