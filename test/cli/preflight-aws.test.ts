// `pull-secret preflight --store aws` end to end: the real CLI and the real AWS SDK against the
// Secrets Manager test server (SigV4 with static test keys), read-only calls only.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { baseEnv, runCli, type CliResult } from '../support/cli.js';
import { awsTestEnv } from '../support/store-harness.js';
import {
  startAwsSecretsManagerTestServer,
  TEST_CREDENTIALS,
  type AwsSecretsManagerTestServer,
} from '../servers/aws-secrets-manager/index.js';

const ACCOUNT = TEST_CREDENTIALS.accountId;
let server: AwsSecretsManagerTestServer;

function preflight(args: string[], extra: Record<string, string | undefined> = {}): Promise<CliResult> {
  return runCli(
    ['preflight', '--account', ACCOUNT, '--region', server.region, ...args],
    baseEnv({ ...awsTestEnv(), AWS_SECRETS_ENDPOINT: server.endpoint, ...extra }),
  );
}

function line(result: CliResult, title: string): string {
  const found = result.stdout
    .split('\n')
    .find((l) => new RegExp(`^(PASS|FAIL|WARN|SKIP)  ${title}\\s`).test(l));
  assert.ok(found !== undefined, `no report line for ${title} in:\n${result.stdout}`);
  return found;
}

before(async () => (server = await startAwsSecretsManagerTestServer()));
after(async () => server.stop());
beforeEach(() => {
  server.setAllowedOperations(undefined);
  server.resetCalls();
});

describe('pull-secret preflight --store aws', () => {
  test('all allowed: reads pass, writes are a warning with the policy; two read-only calls, exit 0 (store chosen by --account)', async () => {
    const result = await preflight([]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      new RegExp(
        `^Preflight for AWS account ${ACCOUNT} in us-east-1 as role pullsecret-adapter \\(actions tested on arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:hyperfleet-preflight-probe\\)`,
      ),
    );
    assert.match(line(result, 'credentials'), /^PASS /);
    assert.match(line(result, 'secretsmanager:DescribeSecret'), /^PASS .*allowed on/);
    assert.match(line(result, 'secretsmanager:GetSecretValue'), /^PASS /);
    assert.match(
      line(result, 'write actions'),
      /^WARN .*not verified \(preflight writes nothing\): secretsmanager:CreateSecret/,
    );
    assert.match(result.stdout, /3 passed, 0 failed, 1 warnings, 0 skipped\n$/);
    assert.deepEqual(
      server.callLog.map((c) => `${c.operation} ${c.code}`),
      ['DescribeSecret ResourceNotFoundException', 'GetSecretValue ResourceNotFoundException'],
    );
    assert.equal(server.writeCalls, 0);
  });

  test('a refused read fails with the exact put-role-policy fix (KMS statement included), exit 1', async () => {
    server.setAllowedOperations(['DescribeSecret']);
    const result = await preflight(['--role-name', 'customer-adapter'], {
      AWS_SECRETS_KMS_KEY_ID: 'alias/customer',
    });
    assert.equal(result.code, 1);
    assert.match(line(result, 'secretsmanager:GetSecretValue'), /^FAIL .*AccessDeniedException/);
    const fix = result.stdout
      .split('\n')
      .find((l) =>
        l.startsWith(
          '      fix: aws iam put-role-policy --role-name customer-adapter --policy-name pullsecret-secrets-manager',
        ),
      );
    assert.ok(fix !== undefined, result.stdout);
    const policy = JSON.parse(/--policy-document '(.*)'$/.exec(fix)?.[1] ?? '{}') as {
      Statement: Array<{ Action: string[]; Resource: string }>;
    };
    assert.equal(
      policy.Statement[0]?.Resource,
      `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:hyperfleet-*`,
    );
    assert.ok(policy.Statement[0]?.Action.includes('secretsmanager:UpdateSecretVersionStage'));
    assert.deepEqual(policy.Statement[1]?.Action, ['kms:GenerateDataKey', 'kms:Decrypt']);
    assert.equal(
      result.stderr,
      'pull-secret: preflight failed: 1 check failed; run the fix commands above, then preflight again\n',
    );
  });

  test('rejected credentials fail the credentials check and skip the rest; --json carries the verdicts', async () => {
    const result = await preflight(['--json'], {
      AWS_SECRET_ACCESS_KEY: 'wrong-secret-key-0000000000000000000000',
    });
    assert.equal(result.code, 1);
    const report = JSON.parse(result.stdout) as {
      ok: boolean;
      checks: Array<{ id: string; status: string }>;
    };
    assert.equal(report.ok, false);
    assert.deepEqual(
      report.checks.map((c) => `${c.id} ${c.status}`),
      [
        'credentials fail',
        'action:secretsmanager:DescribeSecret skip',
        'action:secretsmanager:GetSecretValue skip',
        'actions:write warn',
      ],
    );
  });

  test('usage errors exit 2 before any call', async () => {
    const account = await preflight(['--account', '12345']);
    assert.equal(account.code, 2);
    assert.match(account.stderr, /invalid option --account: must be a 12-digit AWS account id/);
    const region = await runCli(['preflight', '--store', 'aws', '--account', ACCOUNT], baseEnv(awsTestEnv()));
    assert.equal(region.code, 2);
    assert.match(region.stderr, /required option '--region <name>' not specified/);
    assert.equal(server.totalCalls, 0);
  });
});
