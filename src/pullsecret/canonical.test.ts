import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalize, canonicalizeBytes, fingerprint, sameContent } from './canonical.js';

test('canonical form ignores key order and whitespace, not values', () => {
  const a = Buffer.from('{"auths":{"b":{"auth":"x"},"a":{"auth":"y"}}}');
  const b = Buffer.from('{\n  "auths": { "a": {"auth":"y"}, "b": {"auth": "x"} }\n}');
  const c = Buffer.from('{"auths":{"a":{"auth":"y"},"b":{"auth":"z"}}}');
  assert.ok(sameContent(a, b));
  assert.ok(!sameContent(a, c));
  assert.equal(fingerprint(a), fingerprint(b));
  assert.notEqual(fingerprint(a), fingerprint(c));
  assert.equal(canonicalize({ z: [{ b: 1, a: 2 }], a: null }), '{"a":null,"z":[{"a":2,"b":1}]}');
});

test('non-JSON payloads compare by bytes', () => {
  assert.ok(sameContent(Buffer.from('not json'), Buffer.from('not json')));
  assert.ok(!sameContent(Buffer.from('not json'), Buffer.from('not json ')));
  assert.match(fingerprint(Buffer.from('not json')), /^[0-9a-f]{64}$/);
});

test('a "__proto__" key is part of the canonical form, not dropped', () => {
  const a = Buffer.from('{"auths":{},"__proto__":{"x":1}}');
  const b = Buffer.from('{"auths":{},"__proto__":{"x":2}}');
  assert.equal(sameContent(a, b), false);
  assert.equal(canonicalizeBytes(a), '{"__proto__":{"x":1},"auths":{}}');
});
