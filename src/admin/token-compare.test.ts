import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { digestsEqual, tokenDigest, tokensEqual } from './token-compare.js';
import { newToken } from './token-state.js';

describe('constant-time token comparison', () => {
  it('accepts only the identical token', () => {
    const token = newToken();
    assert.equal(tokensEqual(token, token), true);
    assert.equal(tokensEqual(`${token}`, token.slice(0)), true);
    assert.equal(
      tokensEqual(token.slice(0, -2) + (token.at(-2) === 'A' ? 'B' : 'A') + token.at(-1), token),
      false,
      'one character differs',
    );
    assert.equal(tokensEqual(token.slice(0, 20), token), false, 'a prefix');
    assert.equal(tokensEqual(`${token}x`, token), false, 'a longer value');
    assert.equal(tokensEqual('', token), false, 'empty');
    assert.equal(tokensEqual(token.toLowerCase(), token), false, 'case matters');
  });

  it('never throws on different lengths: both sides are fixed-length digests', () => {
    for (const presented of ['', 'a', 'x'.repeat(10_000), '\u0000', '€'])
      assert.equal(tokensEqual(presented, newToken()), false);
    assert.equal(tokenDigest('a').length, 32);
    assert.equal(tokenDigest('x'.repeat(10_000)).length, 32);
  });

  it('digestsEqual agrees with tokensEqual, and takes only 32-byte digests', () => {
    const token = newToken();
    assert.equal(digestsEqual(tokenDigest(token), tokenDigest(token)), true);
    assert.equal(digestsEqual(tokenDigest(newToken()), tokenDigest(token)), false);
    assert.throws(() => digestsEqual(Buffer.from(token), tokenDigest(token)), RangeError);
  });

  it('new tokens are 32 random bytes in base64', () => {
    const a = newToken();
    assert.match(a, /^[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(a, 'base64').length, 32);
    assert.notEqual(a, newToken());
  });
});
