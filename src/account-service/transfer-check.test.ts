import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PullSecretError } from '../errors/index.js';
import { redactor } from '../pullsecret/redact.js';
import type { AccountServiceClient, TransferAnswer } from './client.js';
import {
  applyTransfer,
  checkTransfer,
  cloudToken,
  TRANSFER_REASONS,
  transferBackoff,
} from './transfer-check.js';

// The decision logic over the client's own interface; the wire protocol is tested against the
// stand-in in test/account-service/account-service.test.ts.

const LIMITS = { maxBytes: 65_536, targetName: 'gcp store' };
const b64 = (s: string) => Buffer.from(s).toString('base64');
const CLOUD = b64('cluster:cloud-token-1');
const CURRENT = Buffer.from(
  JSON.stringify({
    auths: { 'cloud.openshift.com': { auth: CLOUD }, 'quay.io': { auth: b64('a:b'), email: 'a@b.c' } },
  }),
);
const ID = 'cls-123';

/** A client that plays the given answers (an error is thrown) and records the tokens it was given. */
function scripted(
  answers: (TransferAnswer | PullSecretError)[],
): AccountServiceClient & { tokens: string[] } {
  const tokens: string[] = [];
  return {
    baseUrl: 'http://127.0.0.1:1',
    tokens,
    source: () => Promise.reject(new Error('not used')),
    certificate: () => Promise.reject(new Error('not used')),
    transfers: (_id, token) => {
      tokens.push(token);
      const next = answers.shift();
      if (next === undefined) throw new Error('no more answers');
      return next instanceof PullSecretError ? Promise.reject(next) : Promise.resolve(next);
    },
  };
}

function recorder() {
  const delays: number[] = [];
  return { delays, sleep: (ms: number) => Promise.resolve(void delays.push(ms)) };
}

const unavailable = () =>
  new PullSecretError('ACCOUNT_SERVICE_UNAVAILABLE', 'the account service answered 500');

test('backoff: interval/24, doubling, five steps, capped at the interval', () => {
  const hour = 3_600_000;
  assert.deepEqual(
    transferBackoff(12 * hour),
    [0.5, 1, 2, 4, 8].map((h) => h * hour),
  );
  assert.deepEqual(transferBackoff(240), [10, 20, 40, 80, 160]);
  assert.ok(transferBackoff(1000).every((d) => d <= 1000));
});

test('the cloud.openshift.com auth is the token; without it the check does not ask', async () => {
  assert.equal(cloudToken(CURRENT), CLOUD);
  assert.equal(cloudToken(Buffer.from('not json')), undefined);
  const client = scripted([]);
  const decision = await checkTransfer(
    ID,
    Buffer.from(JSON.stringify({ auths: { 'quay.io': { auth: b64('a:b') } } })),
    { client, intervalMs: 240, limits: LIMITS },
  );
  assert.equal(decision.kind, 'no-token');
  assert.equal(client.tokens.length, 0);
});

test('5xx is retried with the backoff and recovers; until the steps run out it is unreachable', async () => {
  const ok: TransferAnswer = { kind: 'none' };
  const once = recorder();
  const client = scripted([unavailable(), unavailable(), ok]);
  assert.equal(
    (await checkTransfer(ID, CURRENT, { client, intervalMs: 240, limits: LIMITS, sleep: once.sleep })).kind,
    'none',
  );
  assert.deepEqual(once.delays, [10, 20]);
  assert.deepEqual(client.tokens, [CLOUD, CLOUD, CLOUD]);

  const always = recorder();
  const down = await checkTransfer(ID, CURRENT, {
    client: scripted(Array.from({ length: 6 }, unavailable)),
    intervalMs: 240,
    limits: LIMITS,
    sleep: always.sleep,
  });
  assert.equal(down.kind, 'unreachable');
  assert.equal(down.kind === 'unreachable' && down.attempts, 6);
  assert.deepEqual(always.delays, [10, 20, 40, 80, 160]);

  const fewer = recorder();
  const single = await checkTransfer(ID, CURRENT, {
    client: scripted([unavailable(), unavailable()]),
    intervalMs: 240,
    limits: LIMITS,
    sleep: fewer.sleep,
    retries: 1,
  });
  assert.deepEqual([single.kind, fewer.delays], ['unreachable', [10]]);
});

test('4xx and contract breaks are not retried', async () => {
  const refused = await checkTransfer(ID, CURRENT, {
    client: scripted([new PullSecretError('ACCOUNT_SERVICE_REFUSED', 'the account service answered 403')]),
    intervalMs: 240,
    limits: LIMITS,
  });
  assert.equal(refused.kind, 'refused');
  const odd = await checkTransfer(ID, CURRENT, {
    client: scripted([new PullSecretError('ACCOUNT_SERVICE_UNEXPECTED', 'x')]),
    intervalMs: 240,
    limits: LIMITS,
  });
  assert.equal(odd.kind, 'unexpected');
});

test('decisions: multiple, corrupted (empty or invalid secret), unchanged, update', async () => {
  const check = (answer: TransferAnswer) =>
    checkTransfer(ID, CURRENT, { client: scripted([answer]), intervalMs: 240, limits: LIMITS });
  const two = await check({ kind: 'accepted', total: 2, items: [{ id: 't1', secret: '{}' }] });
  assert.equal(two.kind, 'multiple');
  assert.equal(
    (await check({ kind: 'accepted', total: 1, items: [{ id: 't1', secret: '' }] })).kind,
    'corrupted',
  );
  assert.equal(
    (await check({ kind: 'accepted', total: 1, items: [{ id: 't1', secret: undefined }] })).kind,
    'corrupted',
  );
  assert.equal(
    (
      await check({
        kind: 'accepted',
        total: 1,
        items: [{ id: 't1', secret: '{"auths":{"quay.io":{"auth":"bad"}}}' }],
      })
    ).kind,
    'corrupted',
  );
  const same = await check({
    kind: 'accepted',
    total: 1,
    items: [
      { id: 't1', secret: JSON.stringify({ auths: { 'quay.io': { email: 'a@b.c', auth: b64('a:b') } } }) },
    ],
  });
  assert.equal(same.kind, 'unchanged');
  const update = await check({
    kind: 'accepted',
    total: 1,
    items: [{ id: 't1', secret: JSON.stringify({ auths: { 'quay.io': { auth: b64('new:owner') } } }) }],
  });
  assert.equal(update.kind, 'update');
  if (update.kind !== 'update') return;
  assert.deepEqual(update.replaced, ['quay.io']);
  const written: Buffer[] = [];
  const applied = await applyTransfer(
    update,
    (data) => Promise.resolve(void written.push(data)),
    () => new Date('2026-01-01T00:00:00Z'),
  );
  assert.deepEqual(applied, {
    kind: 'updated',
    transferId: 't1',
    replaced: ['quay.io'],
    added: [],
    appliedAt: '2026-01-01T00:00:00.000Z',
  });
  assert.equal(written.length, 1);
  const failed = await applyTransfer(update, () =>
    Promise.reject(new PullSecretError('STORE_UNAVAILABLE', 'store down')),
  );
  assert.equal(failed.kind, 'update-failed');
  assert.equal(
    (await applyTransfer({ kind: 'none' }, () => Promise.reject(new Error('must not write')))).kind,
    'none',
  );
});

test('every outcome kind has a distinct PascalCase reason and snake_case label', () => {
  const entries = Object.values(TRANSFER_REASONS);
  assert.equal(new Set(entries.map((e) => e.label)).size, entries.length);
  for (const { reason, label } of entries) {
    assert.match(reason, /^[A-Z][A-Za-z]+$/);
    assert.match(label, /^[a-z_]+$/);
  }
});

test('an invalid current pull secret is reported as such, without asking', async () => {
  const client = scripted([]);
  const decision = await checkTransfer(ID, Buffer.from('{"auths":{}}'), {
    client,
    intervalMs: 240,
    limits: LIMITS,
  });
  assert.equal(decision.kind, 'current-invalid');
  assert.equal(client.tokens.length, 0);
});

test('credentials are masked while the check runs and released after it, so a fleet does not pile them up', async () => {
  const NEW = b64('new:owner-credential');
  let maskedDuring = false;
  const client = scripted([
    {
      kind: 'accepted',
      total: 1,
      items: [{ id: 't1', secret: JSON.stringify({ auths: { 'quay.io': { auth: NEW } } }) }],
    },
    unavailable(),
  ]);
  const original = client.transfers.bind(client);
  client.transfers = async (...args) => {
    const answer = await original(...args);
    maskedDuring = redactor.redact(CLOUD) !== CLOUD;
    return answer;
  };
  assert.equal(
    (await checkTransfer(ID, CURRENT, { client, intervalMs: 240, limits: LIMITS })).kind,
    'update',
  );
  assert.ok(maskedDuring, 'the cloud token is masked during the check');
  assert.equal(redactor.redact(`${CLOUD} ${NEW}`), `${CLOUD} ${NEW}`, 'released after the check');
});
