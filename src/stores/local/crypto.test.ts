import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { decryptPayload, encryptPayload } from './crypto.js';

const key = randomBytes(32);
const binding = { secretId: 'hyperfleet-cls-1-pull-secret', version: 3 };
const plaintext = Buffer.from('{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}');

test('round trip; a fresh IV makes every encryption differ; layout is iv | ciphertext | tag', () => {
  const a = encryptPayload(key, binding, plaintext);
  const b = encryptPayload(key, binding, plaintext);
  assert.notEqual(a, b);
  assert.equal(Buffer.from(a, 'base64').length, 12 + plaintext.length + 16);
  assert.deepEqual(decryptPayload(key, binding, a), plaintext);
  assert.deepEqual(
    decryptPayload(key, binding, encryptPayload(key, binding, Buffer.alloc(0))),
    Buffer.alloc(0),
  );
});

test('the secret id and version are authenticated: moving a ciphertext fails', () => {
  const sealed = encryptPayload(key, binding, plaintext);
  assert.throws(() => decryptPayload(key, { ...binding, version: 4 }, sealed), { code: 'STORE_CORRUPT' });
  assert.throws(() => decryptPayload(key, { ...binding, secretId: 'hyperfleet-cls-2-pull-secret' }, sealed), {
    code: 'STORE_CORRUPT',
  });
});

test('any flipped bit, truncation or wrong key fails with STORE_CORRUPT and never echoes the data', () => {
  const sealed = Buffer.from(encryptPayload(key, binding, plaintext), 'base64');
  for (const index of [0, 11, 12, 20, sealed.length - 1]) {
    const tampered = Buffer.from(sealed);
    tampered[index] = (tampered[index] ?? 0) ^ 0x80;
    assert.throws(
      () => decryptPayload(key, binding, tampered.toString('base64')),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'STORE_CORRUPT');
        assert.match(err.message, /cannot decrypt version 3 of secret "hyperfleet-cls-1-pull-secret"/);
        assert.ok(!err.message.includes('dXNlcjpwYXNz'));
        return true;
      },
    );
  }
  assert.throws(() => decryptPayload(key, binding, sealed.subarray(0, 27).toString('base64')), {
    code: 'STORE_CORRUPT',
  });
  assert.throws(() => decryptPayload(randomBytes(32), binding, sealed.toString('base64'), 'wrong key hint'), {
    code: 'STORE_CORRUPT',
    message: /wrong key hint/,
  });
});
