import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PullSecretError } from '../errors/index.js';
import { canonicalize } from './canonical.js';
import { mergeTransferredPullSecret } from './transfer-merge.js';

const LIMIT = { maxBytes: 65_536, targetName: 'gcp store' };
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const OLD_QUAY = b64('olduser:oldpass');
const NEW_QUAY = b64('newuser:newpass');
const CLOUD = b64('cluster:cloudtoken');

const current = {
  auths: {
    'cloud.openshift.com': { auth: CLOUD, email: 'old@example.com' },
    'quay.io': { auth: OLD_QUAY, email: 'old@example.com' },
    'registry.example.com:5000': { auth: b64('mirror:pw') },
  },
  credHelpers: { 'gcr.io': 'gcloud' },
};
const text = (doc: unknown) => JSON.stringify(doc);
const merge = (transferred: unknown, base: unknown = current) =>
  mergeTransferredPullSecret(
    text(base),
    typeof transferred === 'string' ? transferred : text(transferred),
    LIMIT,
  );
const auths = (data: Buffer) =>
  (JSON.parse(data.toString('utf8')) as { auths: Record<string, Record<string, unknown>> }).auths;

function refused(fn: () => unknown, pattern: RegExp): void {
  assert.throws(
    fn,
    (err: unknown) =>
      err instanceof PullSecretError && err.code === 'PULL_SECRET_INVALID' && pattern.test(err.message),
  );
}

test('a named registry is replaced field by field; fields the transfer omits (email) are kept', () => {
  const result = merge({ auths: { 'quay.io': { auth: NEW_QUAY } } });
  assert.equal(result.changed, true);
  assert.deepEqual(result.replaced, ['quay.io']);
  assert.deepEqual(result.added, []);
  assert.deepEqual(auths(result.data)['quay.io'], { auth: NEW_QUAY, email: 'old@example.com' });
});

test('a registry the transfer adds is added; registries it does not name are never removed', () => {
  const result = merge({ auths: { 'registry.redhat.io': { auth: b64('rh:pw'), email: 'new@example.com' } } });
  assert.equal(result.changed, true);
  assert.deepEqual(result.added, ['registry.redhat.io']);
  assert.deepEqual(Object.keys(auths(result.data)).sort(), [
    'cloud.openshift.com',
    'quay.io',
    'registry.example.com:5000',
    'registry.redhat.io',
  ]);
  assert.deepEqual(auths(result.data)['quay.io'], current.auths['quay.io']);
});

test('top-level keys other than auths are kept from the current secret; the transfer cannot set them', () => {
  const result = merge({
    auths: { 'quay.io': { auth: NEW_QUAY } },
    credHelpers: { 'gcr.io': 'evil' },
    other: 1,
  });
  const doc = JSON.parse(result.data.toString('utf8')) as Record<string, unknown>;
  assert.deepEqual(doc.credHelpers, { 'gcr.io': 'gcloud' });
  assert.equal('other' in doc, false);
});

test('the result is the canonical serialization', () => {
  const result = merge({ auths: { 'quay.io': { auth: NEW_QUAY } } });
  assert.equal(result.data.toString('utf8'), canonicalize(JSON.parse(result.data.toString('utf8'))));
});

test('the same content in another key order and formatting is no change', () => {
  const reordered = `{\n  "auths": {"quay.io": {"email": "old@example.com", "auth": "${OLD_QUAY}"},\n "cloud.openshift.com": {"email":"old@example.com","auth":"${CLOUD}"}}}`;
  const result = merge(reordered);
  assert.equal(result.changed, false);
  assert.deepEqual([result.replaced, result.added], [[], []]);
  assert.equal(result.data.toString('utf8'), canonicalize(current));
});

test('an explicit null never deletes: neither an entry nor a field', () => {
  const entry = merge({ auths: { 'quay.io': null, 'cloud.openshift.com': { auth: CLOUD } } });
  assert.equal(entry.changed, false);
  assert.deepEqual(auths(entry.data)['quay.io'], current.auths['quay.io']);
  const field = merge({ auths: { 'quay.io': { auth: NEW_QUAY, email: null } } });
  assert.deepEqual(auths(field.data)['quay.io'], { auth: NEW_QUAY, email: 'old@example.com' });
  const onlyNulls = merge({ auths: { 'new.example.com': { auth: null } } });
  assert.equal(onlyNulls.changed, false);
  assert.equal('new.example.com' in auths(onlyNulls.data), false);
});

test('a change of a field other than auth or email counts as a change', () => {
  for (const [field, value] of [
    ['identitytoken', 'new-identity-token'],
    ['registrytoken', 'new-registry-token'],
  ] as const) {
    const base = { auths: { 'quay.io': { auth: OLD_QUAY, [field]: 'before' } } };
    const same = merge({ auths: { 'quay.io': { [field]: 'before' } } }, base);
    assert.equal(same.changed, false, `${field} unchanged`);
    const result = merge({ auths: { 'quay.io': { [field]: value } } }, base);
    assert.equal(result.changed, true, field);
    assert.deepEqual(result.replaced, ['quay.io']);
    assert.deepEqual(auths(result.data)['quay.io'], { auth: OLD_QUAY, [field]: value });
  }
});

test('one credential per entry: a transferred username/password re-encodes auth', () => {
  const result = merge({ auths: { 'quay.io': { username: 'newuser', password: 'newpass' } } });
  assert.deepEqual(result.replaced, ['quay.io']);
  assert.deepEqual(auths(result.data)['quay.io'], {
    auth: NEW_QUAY,
    email: 'old@example.com',
    username: 'newuser',
    password: 'newpass',
  });
  assert.deepEqual(result.credentials, [{ registry: 'quay.io', rule: 'auth-from-username-password' }]);
  // Half a pair completed by the current entry's other half.
  const base = { auths: { 'quay.io': { auth: OLD_QUAY, username: 'newuser', password: 'oldpass' } } };
  assert.deepEqual(auths(merge({ auths: { 'quay.io': { password: 'newpass' } } }, base).data)['quay.io'], {
    auth: NEW_QUAY,
    username: 'newuser',
    password: 'newpass',
  });
  // Half a pair with no other half in the entry: the other half of the current auth.
  assert.deepEqual(auths(merge({ auths: { 'quay.io': { password: 'newpass' } } }).data)['quay.io'], {
    auth: b64('olduser:newpass'),
    email: 'old@example.com',
    password: 'newpass',
  });
  refused(
    () => merge({ auths: { 'new.example.com': { username: 'newuser' } } }),
    /registry "new.example.com": a username needs its password/,
  );
});

test('one credential per entry: a transferred auth removes the stale username/password', () => {
  const base = {
    auths: {
      'quay.io': { auth: OLD_QUAY, username: 'olduser', password: 'oldpass', email: 'old@example.com' },
    },
  };
  const result = merge({ auths: { 'quay.io': { auth: NEW_QUAY } } }, base);
  assert.deepEqual(auths(result.data)['quay.io'], { auth: NEW_QUAY, email: 'old@example.com' });
  assert.deepEqual(result.credentials, [{ registry: 'quay.io', rule: 'stale-username-password-removed' }]);
  assert.deepEqual(merge({ auths: { 'quay.io': { auth: NEW_QUAY } } }).credentials, []);
});

test('a merged result that fails validation is refused as a whole', () => {
  refused(
    () => merge({ auths: { 'quay.io': { auth: b64('no-colon') } } }),
    /^transferred pull secret refused: the merged result is not valid/,
  );
  refused(() => merge({ auths: { 'new.example.com': { email: 'x@y' } } }), /needs an "auth"/);
  assert.throws(
    () =>
      mergeTransferredPullSecret(
        text(current),
        text({ auths: { 'quay.io': { auth: NEW_QUAY, note: 'x'.repeat(70_000) } } }),
        LIMIT,
      ),
    (err: unknown) => err instanceof PullSecretError && err.code === 'PAYLOAD_TOO_LARGE',
  );
});

test('a transferred document that is not a pull secret is refused, without echoing it', () => {
  const secret = b64('leaky:canary-secret');
  for (const [input, pattern] of [
    ['', /empty/],
    ['not json', /not valid JSON/],
    ['[]', /must be a JSON object/],
    ['{"auths":[]}', /"auths" must be an object/],
    ['{"auths":{}}', /"auths" is empty/],
    [text({ auths: { 'quay.io': secret } }), /entry must be an object/],
    [text({ auths: { [`bot:${secret}@quay.io`]: { auth: secret } } }), /registry key #1/],
    [`{"auths":{"quay.io":{"auth":"${secret}"},"quay.io":{"auth":"${secret}"}}}`, /duplicate key/],
  ] as const) {
    assert.throws(
      () => merge(input),
      (err: unknown) =>
        err instanceof PullSecretError &&
        err.code === 'PULL_SECRET_INVALID' &&
        pattern.test(err.message) &&
        !err.message.includes(secret) &&
        !err.message.includes('canary-secret'),
      input,
    );
  }
});

test('an invalid current pull secret is refused (nothing to merge into)', () => {
  refused(
    () =>
      mergeTransferredPullSecret('{"auths":{}}', text({ auths: { 'quay.io': { auth: NEW_QUAY } } }), LIMIT),
    /^invalid pull secret format/,
  );
});

const registryArb = fc.constantFrom(
  'quay.io',
  'cloud.openshift.com',
  'registry.redhat.io',
  'localhost:5000',
  'quay.io/org',
);
const entryArb = fc.record(
  {
    auth: fc.stringMatching(/^[a-z]{1,8}:[a-z]{1,8}$/).map(b64),
    email: fc.oneof(fc.emailAddress(), fc.constant(null)),
    identitytoken: fc.stringMatching(/^[a-z0-9]{1,12}$/),
    extra: fc.oneof(fc.integer(), fc.constant(null)),
  },
  { requiredKeys: ['auth'] },
);
type Entry = Record<string, unknown>;
const wordArb = fc.stringMatching(/^[a-z]{1,8}$/);
/** A transfer's entry naming its credential as a username/password pair, without `auth`. */
const pairEntryArb: fc.Arbitrary<Entry> = fc.record(
  { username: wordArb, password: wordArb, email: fc.oneof(fc.emailAddress(), fc.constant(null)) },
  { requiredKeys: ['username', 'password'] },
);
const transferEntryArb: fc.Arbitrary<Entry | null> = fc.oneof(entryArb, pairEntryArb, fc.constant(null));
const docArb = <T>(entry: fc.Arbitrary<T>): fc.Arbitrary<{ auths: Record<string, T> }> =>
  fc.dictionary(registryArb, entry, { minKeys: 1, maxKeys: 5 }).map((a) => ({ auths: a }));
/** Current entries: `auth`, sometimes beside a username/password pair that may disagree with it (stale). */
const currentEntryArb: fc.Arbitrary<Entry> = fc
  .tuple(entryArb, fc.option(fc.record({ username: wordArb, password: wordArb }), { nil: undefined }))
  .map(([e, pair]) => ({ ...Object.fromEntries(Object.entries(e).filter(([, v]) => v !== null)), ...pair }));
const validCurrentArb = docArb<Entry>(currentEntryArb);
const CREDENTIAL_FIELDS = new Set(['auth', 'username', 'password']);

test('property: nothing is deleted, named fields win, merging twice changes nothing', () => {
  fc.assert(
    fc.property(validCurrentArb, docArb(transferEntryArb), (base, transfer) => {
      // Every generated entry is complete, so no merge of them may be refused.
      const result = mergeTransferredPullSecret(text(base), text(transfer), LIMIT);
      const merged = auths(result.data);
      for (const [registry, entry] of Object.entries(base.auths)) {
        assert.ok(registry in merged, `deleted ${registry}`);
        // Only the one-credential rule removes a field: a stale username/password beside a transferred auth.
        const named = transfer.auths[registry];
        for (const field of Object.keys(entry)) {
          if (named != null && typeof named.auth === 'string' && CREDENTIAL_FIELDS.has(field)) continue;
          assert.ok(field in (merged[registry] ?? {}), `deleted ${registry}.${field}`);
        }
      }
      for (const [registry, entry] of Object.entries(transfer.auths)) {
        if (entry === null) continue;
        for (const [field, value] of Object.entries(entry))
          if (value !== null) assert.deepEqual(merged[registry]?.[field], value);
        // One credential: a username/password beside auth is the pair auth encodes.
        const { auth, username, password } = merged[registry] ?? {};
        if (username !== undefined || password !== undefined)
          assert.equal(
            auth,
            b64(`${String(username)}:${String(password)}`),
            `two credentials in ${registry}`,
          );
      }
      assert.equal(result.changed, canonicalize(merged) !== canonicalize(base.auths));
      const again = mergeTransferredPullSecret(result.data, text(transfer), LIMIT);
      assert.equal(again.changed, false, 'idempotent');
      assert.ok(again.data.equals(result.data));
    }),
    { numRuns: 300 },
  );
});
