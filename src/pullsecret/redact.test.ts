import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Redactor } from './redact.js';
import { credentialStrings } from './credentials.js';

test('redacts every credential string of a pull secret, raw and JSON-escaped', () => {
  const text =
    '{"auths":{"quay.io":{"auth":"cHVsbGJvdDpzM2NyM3QtY2FuYXJ5LTdRMnY=","identitytoken":"tok-123456"}}}';
  const r = new Redactor();
  r.register(credentialStrings(text));
  const line = JSON.stringify({
    a: text,
    b: 'pullbot:s3cr3t-canary-7Q2v',
    c: 's3cr3t-canary-7Q2v',
    d: 'tok-123456',
    e: 'cHVsbGJvdDpzM2NyM3QtY2FuYXJ5LTdRMnY=',
  });
  const out = r.redact(line);
  for (const needle of [
    's3cr3t-canary-7Q2v',
    'cHVsbGJvdDpzM2NyM3QtY2FuYXJ5LTdRMnY=',
    'tok-123456',
    'pullbot:',
  ]) {
    assert.ok(!out.includes(needle), `${needle} leaked: ${out}`);
  }
  assert.match(out, /\[REDACTED\]/);
});

test('short strings are not registered and unrelated text is untouched', () => {
  const r = new Redactor();
  assert.ok(r.empty);
  r.register(['abc', 'longer-secret']);
  assert.equal(r.redact('abc is fine'), 'abc is fine');
  assert.equal(r.redact('x longer-secret y'), 'x [REDACTED] y');
});

test('credentialStrings never throws on garbage', () => {
  assert.deepEqual(credentialStrings('not json'), ['not json', 'not json']);
  assert.equal(credentialStrings('{"auths":[1]}').length, 2);
});

test('a released registration stops masking; shared strings stay until every holder releases', () => {
  const r = new Redactor();
  const first = r.register(['shared-secret', 'only-first']);
  const second = r.register(['shared-secret']);
  first();
  first();
  assert.equal(r.redact('only-first shared-secret'), 'only-first [REDACTED]');
  second();
  assert.ok(r.empty);
  assert.equal(r.redact('shared-secret'), 'shared-secret');
});

test('a credential registered or released after a redaction changes what the next one masks, longest first', () => {
  const r = new Redactor();
  const releaseShort = r.register(['secret-part']);
  assert.equal(r.redact('a secret-part-and-more b'), 'a [REDACTED]-and-more b');
  // Registered after the first redaction: the longer credential, which contains the shorter one, is masked whole.
  const releaseLong = r.register(['secret-part-and-more']);
  assert.equal(r.redact('a secret-part-and-more b'), 'a [REDACTED] b');
  releaseLong();
  assert.equal(r.redact('a secret-part-and-more b'), 'a [REDACTED]-and-more b');
  releaseShort();
  assert.ok(r.empty);
  assert.equal(r.redact('a secret-part-and-more b'), 'a secret-part-and-more b');
});
