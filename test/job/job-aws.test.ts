import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseEnv, finalLine, runCli } from '../support/cli.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';
import { awsTestEnv } from '../support/store-harness.js';
import {
  startAwsSecretsManagerTestServer,
  TEST_CREDENTIALS,
  type AwsSecretsManagerTestServer,
} from '../servers/aws-secrets-manager/index.js';

// The job through the CLI with SECRET_STORE=aws, against the Secrets Manager test server, through the
// real SDK (SigV4 with static test keys; no metadata service, loopback only).

const ACCOUNT = TEST_CREDENTIALS.accountId;
const OTHER = {
  accessKeyId: 'AKIAOTHERACCOUNT0001',
  secretAccessKey: 'other-account-secret-key-000000000000000',
  accountId: '210987654321',
};
let server: AwsSecretsManagerTestServer;
let n = 0;
let cluster: string;

before(
  async () =>
    (server = await startAwsSecretsManagerTestServer({
      region: 'eu-west-1',
      credentials: [TEST_CREDENTIALS, OTHER],
    })),
);
after(async () => server.stop());
beforeEach(() => {
  cluster = `cls-aws-${++n}`;
  server.resetCalls();
  server.clearFaults();
  server.setAllowedOperations(undefined);
});

function env(extra: Record<string, string | undefined> = {}) {
  return baseEnv({
    ...awsTestEnv(),
    SECRET_STORE: 'aws',
    AWS_SECRETS_ACCOUNT_ID: ACCOUNT,
    AWS_SECRETS_REGION: server.region,
    AWS_SECRETS_ENDPOINT: server.endpoint,
    CLUSTER_ID: cluster,
    PULL_SECRET_DATA: VALID_PULL_SECRET,
    ...extra,
  });
}
const secretName = () => `hyperfleet-${cluster}-pull-secret`;

test('first run: 3 calls (the secret created with its value), tagged, KMS key passed, its real ARN reported; no-op run: one GetSecretValue and no write', async () => {
  const first = await runCli(
    ['run-job', 'pull-secret'],
    env({ AWS_SECRETS_KMS_KEY_ID: 'alias/customer-pull-secrets' }),
  );
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stderr, '');
  const done = finalLine(first);
  assert.equal(done?.outcome, 'created');
  assert.equal(done?.aws_account_id, ACCOUNT);
  assert.equal(done?.aws_region, server.region);
  assert.deepEqual(
    server.callLog.map((c) => `${c.operation} ${c.code}`),
    ['GetSecretValue ResourceNotFoundException', 'CreateSecret OK', 'GetSecretValue OK'],
  );
  const secret = server.state.find(ACCOUNT, secretName());
  assert.deepEqual([...(secret?.versions[0]?.stages ?? [])], ['AWSCURRENT']);
  assert.equal(secret?.kmsKeyId, 'alias/customer-pull-secrets');
  assert.deepEqual(Object.fromEntries((secret?.tags ?? []).map((t) => [t.Key, t.Value])), {
    'managed-by': 'hyperfleet',
    adapter: 'pullsecret',
    'cluster-id': cluster,
    'resource-type': 'pull-secret',
    'hyperfleet-version': 'v1',
  });
  assert.equal(secret?.versions.length, 1);
  assert.equal(secret?.versions[0]?.string, VALID_PULL_SECRET, 'stored exactly as given');

  server.resetCalls();
  const second = await runCli(['run-job', 'pull-secret'], env());
  assert.equal(second.code, 0, second.stderr);
  assert.equal(finalLine(second)?.outcome, 'unchanged');
  assert.deepEqual(
    server.callLog.map((c) => `${c.operation} ${c.code}`),
    ['GetSecretValue OK'],
  );
  assert.equal(server.writeCalls, 0);
});

test('the result file says success with the ARN-style path; a refused action exits 1 with the IAM action named', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-aws-result-'));
  try {
    const results = join(dir, 'result.json');
    const ok = await runCli(['run-job', 'pull-secret'], env({ RESULTS_PATH: results }));
    assert.equal(ok.code, 0, ok.stderr);
    const written = JSON.parse(await readFile(results, 'utf8')) as Record<string, unknown>;
    assert.equal(written.status, 'success');
    const arn = server.state.find(ACCOUNT, secretName())?.arn ?? '';
    assert.match(
      arn,
      new RegExp(
        `^arn:aws:secretsmanager:${server.region}:${ACCOUNT}:secret:${secretName()}-[A-Za-z0-9]{6}$`,
      ),
    );
    assert.ok(
      JSON.stringify(written).includes(`"${arn}"`),
      "the result names the secret's ARN, with the suffix AWS added",
    );

    cluster = `cls-aws-${++n}`;
    server.resetCalls();
    server.setAllowedOperations(['GetSecretValue', 'DescribeSecret']);
    const denied = await runCli(['run-job', 'pull-secret'], env({ RESULTS_PATH: results }));
    assert.equal(denied.code, 1);
    assert.match(
      denied.stderr,
      /AccessDeniedException.*secretsmanager:CreateSecret on arn:aws:secretsmanager:REGION:ACCOUNT:secret:hyperfleet-\*/,
    );
    assert.equal(server.calls.CreateSecret, 1, 'a permanent error is not retried');
    assert.equal((JSON.parse(await readFile(results, 'utf8')) as { status: string }).status, 'failure');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('credentials of another account are refused before any value is written (exit 2)', async () => {
  const result = await runCli(
    ['run-job', 'pull-secret'],
    env({ AWS_ACCESS_KEY_ID: OTHER.accessKeyId, AWS_SECRET_ACCESS_KEY: OTHER.secretAccessKey }),
  );
  assert.equal(result.code, 2, result.stderr);
  assert.match(
    result.stderr,
    /the AWS credentials belong to account 210987654321, but the store is configured for account 123456789012/,
  );
  assert.equal(server.writeCalls, 0, 'nothing written, in either account');
  assert.equal(server.state.find(OTHER.accountId, secretName()), undefined, 'no empty secret left behind');
});

test('a wrong secret key is refused by the signature check (exit 1, not retried)', async () => {
  const result = await runCli(
    ['run-job', 'pull-secret'],
    env({ AWS_SECRET_ACCESS_KEY: 'not-the-right-secret-key-00000000000000' }),
  );
  assert.equal(result.code, 1);
  assert.match(result.stderr, /InvalidSignatureException .*The AWS credentials were missing or rejected/);
  assert.equal(server.totalCalls, 1);
});

test('throttling and a lost PutSecretValue answer are retried without a second version', async () => {
  server.injectFault({ operation: 'GetSecretValue', type: 'ThrottlingException' });
  server.injectFault({ operation: 'PutSecretValue', reset: true, afterApply: true });
  const result = await runCli(['run-job', 'pull-secret'], env());
  assert.equal(result.code, 0, result.stderr);
  assert.equal(finalLine(result)?.outcome, 'created');
  assert.equal(server.state.find(ACCOUNT, secretName())?.versions.length, 1);
});

test('configuration: AWS_REGION alone selects nothing; a missing AWS_SECRETS_REGION is a usage error (exit 2)', async () => {
  const missing = await runCli(
    ['run-job', 'pull-secret'],
    env({ AWS_SECRETS_REGION: undefined, AWS_REGION: 'us-east-1' }),
  );
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /missing required environment variable: AWS_SECRETS_REGION/);
  const contradicted = await runCli(['run-job', 'pull-secret'], env({ SECRET_STORE: 'local' }));
  assert.equal(contradicted.code, 2);
  assert.match(contradicted.stderr, /SECRET_STORE: local contradicts AWS_SECRETS_/);
  assert.equal(server.totalCalls, 0);
});

test('validate-config: store.type aws takes its shared settings; account and region are refused there (each cluster names them)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-aws-config-'));
  try {
    const write = async (name: string, settings: string) => {
      const path = join(dir, name);
      await writeFile(
        path,
        `hyperfleetApi: { baseUrl: "http://127.0.0.1:1" }\nbroker: { type: embedded }\nstore: { type: aws, settings: ${settings} }\n`,
      );
      return path;
    };
    const good = await runCli(
      [
        'validate-config',
        '--config',
        await write('good.yaml', '{ kmsKeyId: alias/pull-secrets, callTimeoutMs: 10000 }'),
      ],
      baseEnv(),
    );
    assert.equal(good.code, 0, good.stderr);
    assert.match(good.stdout, /configuration is valid: broker embedded, store aws/);
    const bad = await runCli(
      [
        'validate-config',
        '--config',
        await write(
          'bad.yaml',
          '{ endpoint: "http://secretsmanager.example.com", accountId: "123456789012" }',
        ),
      ],
      baseEnv(),
    );
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /store\.settings\.endpoint: must be an https:\/\/ URL/);
    assert.match(bad.stderr, /accountId/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
