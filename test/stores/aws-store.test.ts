// The AWS Secrets Manager store in process, through the real SDK against the test server: the paths
// and guarantees the contract suite does not cover (version stages, compare-and-swap of AWSCURRENT
// under concurrent writers, recovery window, KMS, account check, size, classification).
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { managedLabels } from '../../src/pullsecret/identifiers.js';
import { pushSecret } from '../../src/stores/push.js';
import { awsStoreFactory, versionToken } from '../../src/stores/aws-secrets-manager/index.js';
import type { SecretStore } from '../../src/stores/store.js';
import { awsTestEnv } from '../support/store-harness.js';
import { CANARY_NEEDLES, CANARY_PULL_SECRET, VALID_PULL_SECRET } from '../support/fixtures.js';
import {
  startAwsSecretsManagerTestServer,
  TEST_CREDENTIALS,
  type AwsSecretsManagerTestServer,
} from '../servers/aws-secrets-manager/index.js';

const ACCOUNT = TEST_CREDENTIALS.accountId;
const RETRY = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5 };
const A = Buffer.from(VALID_PULL_SECRET);
const B = Buffer.from(VALID_PULL_SECRET.replace('test@example.com', 'b@example.com'));
const C = Buffer.from(VALID_PULL_SECRET.replace('test@example.com', 'c@example.com'));

let server: AwsSecretsManagerTestServer;
let store: SecretStore;
let n = 0;
let cluster: string;
const secretId = () => `hyperfleet-${cluster}-pull-secret`;
const labels = () => managedLabels(cluster);
const push = (data: Buffer, on = store) =>
  pushSecret(on, { secretId: secretId(), labels: labels(), payload: data }, { retry: RETRY });
const make = (extra: Record<string, unknown> = {}) =>
  awsStoreFactory.create({
    accountId: ACCOUNT,
    region: server.region,
    endpoint: server.endpoint,
    callTimeoutMs: 5000,
    ...extra,
  });
const stored = () => server.state.find(ACCOUNT, secretId());
const stagesOf = () =>
  Object.fromEntries((stored()?.versions ?? []).map((v) => [v.string ?? '', [...v.stages].sort()]));

before(async () => {
  Object.assign(process.env, awsTestEnv());
  server = await startAwsSecretsManagerTestServer();
  store = await make();
});
after(async () => {
  await store.close();
  await server.stop();
});
beforeEach(() => {
  cluster = `cls-aws-store-${++n}`;
  server.clearFaults();
  server.resetCalls();
});

describe('AWS store: versions', () => {
  test('a change adds one version and leaves the old value as AWSPREVIOUS; a no-op is one call and no write', async () => {
    const first = await push(A);
    const second = await push(B);
    assert.deepEqual([first.outcome, second.outcome], ['created', 'updated']);
    // No AWSPENDING is left behind (tools and RotateSecret read it as a rotation in progress).
    assert.deepEqual(stagesOf(), { [A.toString()]: ['AWSPREVIOUS'], [B.toString()]: ['AWSCURRENT'] });
    server.resetCalls();
    assert.equal((await push(B)).outcome, 'unchanged');
    assert.deepEqual([server.totalCalls, server.writeCalls], [1, 0]);
  });

  test('A→B→A makes a third version and moves AWSCURRENT back to A', async () => {
    await push(A);
    await push(B);
    const back = await push(A);
    assert.equal(back.outcome, 'updated');
    assert.equal(stored()?.versions.length, 3);
    assert.equal((await store.accessLatestEnabled(secretId()))?.data.toString(), A.toString());
  });

  test('version tokens: same content and base give the same token (formatting aside); another base another token', () => {
    const reformatted = Buffer.from(JSON.stringify(JSON.parse(VALID_PULL_SECRET), null, 2));
    assert.equal(versionToken(A, null), versionToken(reformatted, null));
    assert.notEqual(versionToken(A, null), versionToken(A, versionToken(B, null)));
    assert.notEqual(versionToken(A, null), versionToken(reformatted, null, true));
    assert.match(
      versionToken(A, null),
      /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  test('concurrent writers of the same content: one version', async () => {
    await push(A);
    const others = await Promise.all([make(), make(), make()]);
    try {
      const results = await Promise.all([store, ...others].map((s) => push(B, s)));
      assert.ok(results.every((r) => ['updated', 'unchanged'].includes(r.outcome)));
      assert.equal(stored()?.versions.length, 2);
      assert.equal(new Set(results.map((r) => r.version)).size, 1);
    } finally {
      await Promise.all(others.map((s) => s.close()));
    }
  });

  test('concurrent writers of different content on the same base: AWS refuses all swaps but one, the others re-read and write on top', async () => {
    await push(A);
    const other = await make();
    try {
      const [b, c] = await Promise.all([push(B), push(C, other)]);
      assert.deepEqual([b.outcome, c.outcome], ['updated', 'updated']);
      const current = (await store.accessLatestEnabled(secretId()))?.data.toString();
      const previous = stored()?.versions.find((v) => v.stages.has('AWSPREVIOUS'))?.string;
      // Whoever lost the swap wrote after the winner: the winner's value is AWSPREVIOUS, nothing was lost silently.
      assert.deepEqual(new Set([current, previous]), new Set([B.toString(), C.toString()]));
      assert.ok(server.calls.UpdateSecretVersionStage >= 3, `${server.calls.UpdateSecretVersionStage} swaps`);
    } finally {
      await other.close();
    }
  });

  test('a stale ifLatest is refused by AWS itself (STORE_PRECONDITION_FAILED), and the new version never becomes current', async () => {
    const v1 = (await push(A)).version as string;
    await push(B);
    await assert.rejects(store.addVersion(secretId(), C, { ifLatest: v1 }), {
      code: 'STORE_PRECONDITION_FAILED',
    });
    assert.equal((await store.accessLatestEnabled(secretId()))?.data.toString(), B.toString());
  });

  test('a lost UpdateSecretVersionStage answer is retried to success without a second version', async () => {
    await push(A);
    server.injectFault({
      operation: 'UpdateSecretVersionStage',
      type: 'InternalServiceError',
      afterApply: true,
    });
    const result = await push(B);
    assert.equal(result.outcome, 'updated');
    assert.equal(stored()?.versions.length, 2);
  });
});

describe('AWS store: rules, deletion, KMS, account', () => {
  test('the 65,536-byte limit is checked before any call; bytes that are not UTF-8 go as SecretBinary', async () => {
    await store.createSecret(secretId(), labels());
    server.resetCalls();
    await assert.rejects(store.addVersion(secretId(), Buffer.alloc(65_537, 'x')), {
      code: 'PAYLOAD_TOO_LARGE',
    });
    assert.equal(server.totalCalls, 0);
    await store.addVersion(secretId(), Buffer.alloc(65_536, 'x'));
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x7b]);
    const added = await store.addVersion(secretId(), binary);
    assert.ok((await store.accessVersion(secretId(), added.version)).data.equals(binary));
    assert.ok(stored()?.versions.at(-1)?.binary?.equals(binary));
    await assert.rejects(store.createSecret('a'.repeat(513), labels()), { code: 'IDENTIFIER_INVALID' });
  });

  test('a deleted secret (7-day recovery window) of ours is restored by the next push; a foreign one is refused', async () => {
    await push(A);
    assert.equal(await store.deleteSecret(secretId()), true);
    assert.equal(await store.deleteSecret(secretId()), false, 'already scheduled');
    assert.equal(await store.getSecret(secretId()), undefined);
    assert.ok(stored()?.deletedDate !== undefined);
    assert.equal((await push(A)).outcome, 'unchanged');
    assert.equal(stored()?.deletedDate, undefined);
    assert.equal(server.calls.RestoreSecret, 1);

    cluster = `cls-aws-store-${++n}`;
    server.state.seed(ACCOUNT, secretId(), { tags: { owner: 'someone-else' }, values: ['theirs'] });
    server.state.deleteSecret(ACCOUNT, { SecretId: secretId(), RecoveryWindowInDays: 7 });
    await assert.rejects(
      push(A),
      (err: Error & { code?: string }) =>
        err.code === 'SECRET_UNMANAGED' &&
        /scheduled for deletion and is not managed by HyperFleet/.test(err.message),
    );
    assert.ok(stored()?.deletedDate !== undefined, 'left alone');
  });

  test('the KMS key is passed to CreateSecret; a key Secrets Manager cannot use is a permanent KMS error', async () => {
    const kms = await make({
      kmsKeyId: 'arn:aws:kms:us-east-1:123456789012:key/0b7c1a6e-3f0e-4a5b-9d8e-1c2b3a4d5e6f',
    });
    try {
      await push(A, kms);
      assert.equal(
        stored()?.kmsKeyId,
        'arn:aws:kms:us-east-1:123456789012:key/0b7c1a6e-3f0e-4a5b-9d8e-1c2b3a4d5e6f',
      );
      server.state.unusableKeys.add(stored()?.kmsKeyId ?? '');
      await assert.rejects(push(B, kms), (err: Error & { code?: string; retryable?: boolean }) => {
        assert.equal(err.code, 'STORE_PERMISSION_DENIED');
        assert.equal(err.retryable, false);
        assert.match(err.message, /DecryptionFailure.*The KMS key could not be used/);
        return true;
      });
    } finally {
      await kms.close();
    }
  });

  test('credentials of another account are refused before the first write: STS is asked, nothing is written anywhere', async () => {
    const wrong = await awsStoreFactory.create({
      accountId: '111122223333',
      region: server.region,
      endpoint: server.endpoint,
      callTimeoutMs: 5000,
    });
    try {
      await assert.rejects(push(A, wrong), (err: Error & { code?: string; retryable?: boolean }) => {
        assert.deepEqual([err.code, err.retryable], ['CONFIG_INVALID', false]);
        assert.match(
          err.message,
          /credentials belong to account 123456789012, but the store is configured for account 111122223333/,
        );
        return true;
      });
      assert.deepEqual([server.writeCalls, server.stsCalls], [0, 1]);
      assert.equal(stored(), undefined, "no secret left behind in the credentials' account");
    } finally {
      await wrong.close();
    }
    // The right account: asked once per client, then never again.
    const right = await make();
    try {
      await push(A, right);
      await push(B, right);
      assert.equal(server.stsCalls, 2);
    } finally {
      await right.close();
    }
  });

  test("status and result carry the secret's real ARN (AWS's 6-character suffix), on a first run, an update and a no-op", async () => {
    const arn = () => stored()?.arn ?? '';
    const results = [await push(A), await push(B), await push(B)];
    assert.match(arn(), /-[A-Za-z0-9]{6}$/);
    for (const result of results) {
      assert.equal(result.secretPath, arn(), result.outcome);
      assert.ok(result.versionPath?.startsWith(`${arn()}/versions/`), result.outcome);
    }
    assert.equal((await store.getSecret(secretId()))?.path, arn());
  });

  test('a create now holds the value: a server answer echoing it never reaches the error (as for PutSecretValue)', async () => {
    for (const operation of ['CreateSecret', 'PutSecretValue'] as const) {
      if (operation === 'PutSecretValue') await push(A);
      server.injectFault({
        operation,
        type: 'ValidationException',
        message: `bad value ${CANARY_PULL_SECRET}`,
      });
      await assert.rejects(push(Buffer.from(CANARY_PULL_SECRET)), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'STORE_INVALID_REQUEST', operation);
        for (const needle of CANARY_NEEDLES)
          assert.ok(!err.message.includes(needle), `${operation} message carries the pull secret`);
        return true;
      });
    }
  });

  test('classification: throttling is retryable QUOTA_EXCEEDED, 5xx retryable, access denied permanent and names the action', async () => {
    server.injectFault({ operation: 'DescribeSecret', type: 'ThrottlingException' });
    await assert.rejects(store.getSecret(secretId()), { code: 'STORE_QUOTA_EXCEEDED', retryable: true });
    server.injectFault({ operation: 'DescribeSecret', type: 'ServiceUnavailable' });
    await assert.rejects(store.getSecret(secretId()), { code: 'STORE_UNAVAILABLE', retryable: true });
    server.injectFault({ operation: 'DescribeSecret', reset: true });
    await assert.rejects(store.getSecret(secretId()), { code: 'STORE_UNAVAILABLE', retryable: true });
    server.injectFault({ operation: 'CreateSecret', type: 'AccessDeniedException' });
    await assert.rejects(
      store.createSecret(secretId(), labels()),
      (err: Error & { code?: string; retryable?: boolean }) => {
        assert.deepEqual([err.code, err.retryable], ['STORE_PERMISSION_DENIED', false]);
        assert.match(
          err.message,
          /^AWS Secrets Manager CreateSecret failed for arn:aws:secretsmanager:us-east-1:123456789012:secret:hyperfleet-cls-aws-store-\d+-pull-secret: AccessDeniedException/,
        );
        return true;
      },
    );
    server.injectFault({ operation: 'GetSecretValue', delayMs: 400 });
    const slow = await make({ callTimeoutMs: 100 });
    try {
      await assert.rejects(slow.accessLatestEnabled(secretId()), { code: 'STORE_TIMEOUT', retryable: true });
    } finally {
      await slow.close();
    }
    const controller = new AbortController();
    server.injectFault({ operation: 'GetSecretValue', delayMs: 400 });
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(store.accessLatestEnabled(secretId(), { signal: controller.signal }), {
      code: 'ABORTED',
    });
  });
});
