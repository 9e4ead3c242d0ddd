import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validatePullSecret } from './validate.js';
import { isValidRegistryKey } from './registry-key.js';
import { PullSecretError } from '../errors/index.js';

const LIMIT = { maxBytes: 65536, targetName: 'gcp store' };
const b64 = (s: string) => Buffer.from(s).toString('base64');
const doc = (auths: unknown) => JSON.stringify({ auths });

function rejects(input: string, pattern: RegExp, code = 'PULL_SECRET_INVALID') {
  assert.throws(
    () => validatePullSecret(input, LIMIT),
    (err: unknown) =>
      err instanceof PullSecretError &&
      err.code === code &&
      /^invalid pull secret format: /.test(err.message) &&
      pattern.test(err.message),
  );
}

test('accepts the documented shapes and keeps the bytes as given', () => {
  const input = `{ "auths": {
    "quay.io/myorg": {"auth": "${b64('u:p:with:colons')}", "email": "a@b.c", "x-extra": 1},
    "registry.example.com:5000": {"identitytoken": "tok"},
    "https://index.docker.io/v1/": {"auth": "${b64('me:pw')}"}
  }, "credHelpers": {} }`;
  const result = validatePullSecret(input, LIMIT);
  assert.deepEqual(result.registries, [
    'quay.io/myorg',
    'registry.example.com:5000',
    'https://index.docker.io/v1/',
  ]);
  assert.equal(result.raw.toString(), input);
});

test('rejects each malformed document with a message naming the problem', () => {
  rejects('', /empty/);
  rejects('{"auths":', /not valid JSON/);
  rejects('[]', /must be a JSON object/);
  rejects('{"auths":[]}', /"auths" must be an object/);
  rejects('{"auths":{}}', /"auths" is empty/);
  rejects(doc({ 'quay.io': 'x' }), /registry "quay.io": entry must be an object/);
  rejects(doc({ 'quay.io': {} }), /needs an "auth"/);
  rejects(doc({ 'quay.io': { auth: '' } }), /non-empty base64/);
  rejects(doc({ 'quay.io': { auth: 'not base64!' } }), /not valid base64/);
  rejects(doc({ 'quay.io': { auth: b64('nocolon') } }), /user:password/);
  rejects(doc({ 'quay.io': { auth: b64(':pw') } }), /user:password/);
  rejects(doc({ 'quay.io': { auth: b64('user:') } }), /user:password/);
  rejects(doc({ 'quay.io': { identitytoken: 7 } }), /identitytoken must be a non-empty string/);
  rejects(doc({ 'quay.io': { auth: b64('u:p'), email: 3 } }), /email must be a string/);
  rejects(
    doc({ 'not a host': { auth: b64('u:p') } }),
    /registry key #1 \(10 characters, sha256 [0-9a-f]{8}…\) is not a registry host/,
  );
});

test('registry keys with userinfo are described, never quoted', () => {
  for (const key of ['user:hunter2pass@quay.io', 'https://user:hunter2pass@quay.io', 'quay.io', 'x@y']) {
    const input = doc({ 'registry.redhat.io': { auth: b64('u:p') }, [key]: { auth: b64('u:p') } });
    if (key === 'quay.io') continue;
    try {
      validatePullSecret(input, LIMIT);
      assert.fail('expected a validation error');
    } catch (err) {
      assert.ok(err instanceof PullSecretError);
      assert.match(
        err.message,
        /registry key #2 \(\d+ characters, sha256 [0-9a-f]{8}…\).*a key must not hold credentials \(userinfo before "@"\): put them in "auth"/,
      );
      assert.ok(!err.message.includes('hunter2') && !err.message.includes(key), err.message);
    }
  }
});

test('duplicate keys are refused wherever parsers could disagree', () => {
  const entry = `{"auth":"${b64('u:p')}"}`;
  rejects(`{"auths":{"quay.io":${entry},"quay.io":${entry}}}`, /duplicate key in "auths" \(at offset \d+\)/);
  rejects(
    `{"auths":{"quay.io":{"auth":"${b64('a:b')}","auth":"${b64('c:d')}"}}}`,
    /duplicate key in an object/,
  );
  rejects(
    `{"auths":{"quay.io":${entry}},"auths":{"quay.io":${entry}}}`,
    /duplicate key in the top-level object/,
  );
});

test('deep nesting in an unknown field gets one clear verdict, here and in the Kubernetes step', () => {
  const deep = `{"auths":{"quay.io":{"auth":"${b64('u:p')}"}},"x":${'['.repeat(5000)}${']'.repeat(5000)}}`;
  rejects(deep, /nested deeper than 64 levels/);
  // 64 levels are still fine.
  validatePullSecret(
    `{"auths":{"quay.io":{"auth":"${b64('u:p')}"}},"x":${'['.repeat(63)}${']'.repeat(63)}}`,
    LIMIT,
  );
});

test('auth must decode to UTF-8 text without control characters; email holds no control characters', () => {
  rejects(
    doc({ 'quay.io': { auth: Buffer.from([0x75, 0x3a, 0xff, 0xfe]).toString('base64') } }),
    /auth does not decode to UTF-8 text/,
  );
  rejects(doc({ 'quay.io': { auth: b64('u:p\nforged') } }), /auth decodes to text with control characters/);
  rejects(doc({ 'quay.io': { auth: b64('u\u0000:p') } }), /control characters/);
  rejects(
    doc({ 'quay.io': { auth: b64('u:p'), email: 'a@b.c\r\nX-Forged: 1' } }),
    /email must not hold control characters/,
  );
  validatePullSecret(doc({ 'quay.io': { auth: b64('ü:pässwörd:x'), email: 'ü@b.c' } }), LIMIT);
});

test('identitytoken and registrytoken hold no control characters, and the refusal does not quote them', () => {
  for (const field of ['identitytoken', 'registrytoken']) {
    const input = doc({ 'quay.io': { [field]: 'tok-SECRETBYTES\r\nX-Forged: 1' } });
    rejects(
      input,
      new RegExp(
        `^invalid pull secret format: registry "quay.io": ${field} must not hold control characters$`,
      ),
    );
    assert.throws(
      () => validatePullSecret(input, LIMIT),
      (err: Error) => !err.message.includes('SECRETBYTES'),
    );
    rejects(doc({ 'quay.io': { [field]: 'tok\u0000' } }), /must not hold control characters/);
    validatePullSecret(doc({ 'quay.io': { [field]: 'eyJhbGciOi.ü-token_=' } }), LIMIT);
  }
});

test('size is checked against the target before parsing', () => {
  const big = doc({ 'quay.io': { auth: b64('u:p'), pad: 'x'.repeat(70_000) } });
  rejects(big, /exceeds the gcp store limit of 65536 bytes/, 'PAYLOAD_TOO_LARGE');
  rejects('x'.repeat(70_000), /exceeds/, 'PAYLOAD_TOO_LARGE');
});

test('error messages never echo credentials, even from JSON.parse', () => {
  const secret = 'c3VwZXI6c2VjcmV0LXBhc3N3b3Jk';
  for (const input of [
    `{"auths":{"quay.io":{"auth":"${secret}"`,
    `{"auths":{"quay.io":{"auth":"${secret}x"}}}`,
    `${secret}`,
  ]) {
    try {
      validatePullSecret(input, LIMIT);
      assert.fail('expected a validation error');
    } catch (err) {
      assert.ok(err instanceof PullSecretError);
      assert.ok(!err.message.includes(secret.slice(0, 10)), err.message);
    }
  }
});

test('registry keys: hosts, ports, namespaces, legacy Docker Hub', () => {
  for (const key of [
    'quay.io',
    'localhost:5000',
    'quay.io/org/repo',
    '10.0.0.1:443',
    '[::1]:5000',
    'https://index.docker.io/v1/',
    'REGISTRY.example.com',
  ]) {
    assert.ok(isValidRegistryKey(key), key);
  }
  for (const key of [
    '',
    'quay.io:',
    'quay.io:99999',
    'quay.io/',
    'quay.io/Org',
    '-bad.io',
    'a b',
    'quay.io//x',
    'x'.repeat(300),
  ]) {
    assert.ok(!isValidRegistryKey(key), key);
  }
});

// The kubelet adds https:// to a key without a scheme and parses it as a URL (parseSchemelessURL in
// https://github.com/kubernetes/kubernetes/blob/master/pkg/credentialprovider/keyring.go).
test('registry keys with an http(s) scheme are accepted as the kubelet does; garbage behind one is not', () => {
  for (const key of [
    'https://quay.io',
    'https://quay.io/',
    'http://host:5000/ns',
    'https://registry.example.com:5000/org/repo',
    'http://[::1]:5000',
  ]) {
    assert.ok(isValidRegistryKey(key), key);
  }
  for (const key of [
    'https://',
    'http:///ns',
    'ftp://quay.io',
    'https://quay.io//',
    'https://https://quay.io',
    'https://quay.io/Org',
    'https://a b',
    'HTTPS//quay.io',
  ]) {
    assert.ok(!isValidRegistryKey(key), key);
  }
  const result = validatePullSecret(
    doc({ 'https://quay.io': { auth: b64('u:p') }, 'http://host:5000/ns': { auth: b64('u:p') } }),
    LIMIT,
  );
  assert.deepEqual(result.registries, ['https://quay.io', 'http://host:5000/ns']);
});
