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

/**
 * Compares two token digests (from `tokenDigest`) in constant time: how a checker compares a presented
 * token with stored ones whose digests it computed once. @throws RangeError when either is not 32 bytes
 */
export function digestsEqual(presented: Buffer, expected: Buffer): boolean {
  if (presented.length !== 32 || expected.length !== 32) throw new RangeError('token digests are 32 bytes');
  return timingSafeEqual(presented, expected);
}
