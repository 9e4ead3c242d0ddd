import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PullSecretError } from '../errors/index.js';
import { canonicalize, canonicalizeBytes, sameContent } from './canonical.js';
import { deriveClusterNames } from './cluster-names.js';
import { parseStrictJson } from './strict-json.js';
import { validatePullSecret } from './validate.js';

// Properties of the parsers of untrusted pull secrets: every input either passes or throws a
// classified PullSecretError whose message holds no credential; the canonical form is idempotent
// and blind to key order and formatting; the strict parser agrees with JSON.parse where both accept.

const RUNS = { numRuns: 300 };
const LIMIT = { maxBytes: 65_536, targetName: 'gcp store' };
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** A credential-shaped secret: a fixed marker no generated structure contains, plus random text. */
const secretArb = fc.stringMatching(/^[A-Za-z0-9+/=._~!-]{6,24}$/).map((s) => `Zq9SECRET${s}`);

const registryArb = fc.oneof(
  fc.constantFrom(
    'quay.io',
    'registry.redhat.io',
    'localhost:5000',
    'quay.io/org/repo',
    'https://index.docker.io/v1/',
  ),
  fc.stringMatching(/^[a-z0-9]{1,10}(\.[a-z0-9]{1,6}){0,2}(:[0-9]{1,5})?$/),
  fc.string({ maxLength: 20 }),
);

/** A registry key, sometimes with the secret as userinfo (`user:secret@host`, `https://user:secret@host`). */
function keyArb(secret: string): fc.Arbitrary<{ key: string; carries: boolean }> {
  return fc.oneof(
    registryArb.map((key) => ({ key, carries: false })),
    fc
      .tuple(fc.constantFrom('', 'https://', 'http://'), registryArb)
      .map(([scheme, host]) => ({ key: `${scheme}bot:${secret}@${host}`, carries: true })),
  );
}

function entryArb(secret: string): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constant({ auth: b64(`bot:${secret}`) }),
    fc.constant({ auth: b64(`bot:${secret}`), email: `a@b.c` }),
    fc.constant({ identitytoken: secret }),
    fc.constant({ auth: `${b64(`bot:${secret}`)}!` }),
    fc.constant({ auth: b64(`bot:${secret}\n`) }),
    fc.constant({ registrytoken: secret, email: `x\u0007@y` }),
    fc.jsonValue({ maxDepth: 2 }),
  );
}

/** A document built like a real or broken pull secret, with `secret` in every credential position. */
const documentArb = secretArb.chain((secret) =>
  fc
    .array(fc.tuple(keyArb(secret), entryArb(secret)), { minLength: 0, maxLength: 4 })
    .chain((entries) =>
      fc.record({
        auths: fc.constant(Object.fromEntries(entries.map(([{ key }, entry]) => [key, entry]))),
        extra: fc.jsonValue({ maxDepth: 3 }),
        duplicate: fc.boolean(),
        cut: fc.option(fc.nat(), { nil: undefined }),
      }),
    )
    .map(({ auths, extra, duplicate, cut }) => {
      let text = JSON.stringify({ auths, extra });
      // A duplicated member, the way a hand-edited file gets one.
      if (duplicate)
        text = text
          .replace('{"auths":{', `{"auths":{"quay.io":{"auth":"${b64(`bot:${secret}`)}"},`)
          .replace(/}$/, ',"auths":{}}');
      if (cut !== undefined) text = text.slice(0, cut % (text.length + 1));
      return { secret, text };
    }),
);

function assertClassified(err: unknown, secret: string, codes: readonly string[]): void {
  assert.ok(err instanceof PullSecretError, `not a PullSecretError: ${String(err)}`);
  assert.ok(codes.includes(err.code), err.code);
  assert.ok(
    !err.message.includes(secret) && !err.message.includes('Zq9SECRET'),
    `message echoes the secret: ${err.message}`,
  );
  assert.ok(!err.message.includes(b64(`bot:${secret}`)), `message echoes the auth: ${err.message}`);
}

test('validation passes or throws a classified error that never echoes a credential', () => {
  fc.assert(
    fc.property(documentArb, ({ secret, text }) => {
      try {
        validatePullSecret(text, LIMIT);
      } catch (err) {
        assertClassified(err, secret, ['PULL_SECRET_INVALID', 'PAYLOAD_TOO_LARGE']);
      }
    }),
    RUNS,
  );
});

test('arbitrary text: only classified errors, never an echo of the input', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), secretArb, (noise, secret) => {
      try {
        validatePullSecret(`${noise}${secret}`, LIMIT);
      } catch (err) {
        assertClassified(err, secret, ['PULL_SECRET_INVALID', 'PAYLOAD_TOO_LARGE']);
      }
    }),
    RUNS,
  );
});

/** The same JSON value with object keys in another order. */
function shuffled(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v, i) => shuffled(v, seed + i));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  const order = keys
    .map((k, i) => [k, (seed * 31 + i * 17) % (keys.length + 7)] as const)
    .sort((a, b) => a[1] - b[1]);
  const out: Record<string, unknown> = {};
  for (const [k] of order)
    Object.defineProperty(out, k, {
      value: shuffled((value as Record<string, unknown>)[k], seed + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}

test('canonical form is idempotent and insensitive to key order and formatting', () => {
  fc.assert(
    fc.property(
      fc.jsonValue({ maxDepth: 5 }),
      fc.nat(1000),
      fc.constantFrom(0, 1, 2, '\t'),
      (value, seed, indent) => {
        const canonical = canonicalize(value);
        assert.equal(canonicalizeBytes(Buffer.from(canonical)), canonical, 'idempotent');
        const reordered = JSON.stringify(shuffled(value, seed), null, indent);
        assert.equal(canonicalizeBytes(Buffer.from(reordered)), canonical, 'order and whitespace');
        assert.ok(sameContent(Buffer.from(reordered), Buffer.from(JSON.stringify(value))));
      },
    ),
    RUNS,
  );
});

test('the strict parser agrees with JSON.parse wherever it accepts, and refuses only what JSON.parse refuses or duplicates', () => {
  const textArb = fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  );
  fc.assert(
    fc.property(textArb, (text) => {
      let expected: { ok: true; value: unknown } | { ok: false };
      try {
        expected = { ok: true, value: JSON.parse(text) as unknown };
      } catch {
        expected = { ok: false };
      }
      const strict = parseStrictJson(text);
      if (strict.ok) {
        assert.ok(expected.ok, `strict accepted what JSON.parse refuses: ${JSON.stringify(text)}`);
        assert.deepEqual(strict.value, expected.value);
      } else if (expected.ok) {
        assert.ok(
          strict.problem.kind === 'duplicate' || strict.problem.kind === 'depth',
          `refused valid JSON: ${JSON.stringify(text)}`,
        );
      }
    }),
    { numRuns: 500 },
  );
});

test('cluster names: any id, secret name or namespace passes or throws IDENTIFIER_INVALID without echoing a credential', () => {
  const nameArb = fc.oneof(fc.stringMatching(/^[a-z0-9-]{1,70}$/), fc.string({ maxLength: 80 }), secretArb);
  fc.assert(
    fc.property(
      nameArb,
      fc.option(secretArb, { nil: undefined }),
      fc.option(nameArb, { nil: undefined }),
      (clusterId, secretName, namespace) => {
        try {
          const names = deriveClusterNames({ clusterId, secretName, namespace });
          assert.ok(Object.isFrozen(names));
        } catch (err) {
          assert.ok(err instanceof PullSecretError && err.code === 'IDENTIFIER_INVALID', String(err));
          assert.ok(!err.message.includes('Zq9SECRET'), err.message);
        }
      },
    ),
    RUNS,
  );
});
