import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseEnv } from '../../config/env.js';
import { selectStoreKind, scopeStatusData } from '../registry.js';
import { awsLocation, awsStoreConfigSchema, awsStoreEnv } from './config.js';

const fromEnv = (env: Record<string, string | undefined>) => parseEnv(awsStoreConfigSchema, awsStoreEnv, env);
const BASE = { AWS_SECRETS_ACCOUNT_ID: '123456789012', AWS_SECRETS_REGION: 'eu-central-1' };

test('account and region alone give the defaults; both are required, and AWS_REGION does not stand in', () => {
  assert.deepEqual(fromEnv(BASE), {
    ok: true,
    value: { accountId: '123456789012', region: 'eu-central-1', callTimeoutMs: 30_000 },
  });
  const missing = fromEnv({ AWS_REGION: 'us-east-1', AWS_ACCOUNT_ID: '123456789012' });
  assert.deepEqual(!missing.ok && missing.missing, ['AWS_SECRETS_ACCOUNT_ID', 'AWS_SECRETS_REGION']);
});

test('values are checked by rule and never echoed', () => {
  for (const [name, bad] of [
    ['AWS_SECRETS_ACCOUNT_ID', '12345678901'],
    ['AWS_SECRETS_ACCOUNT_ID', 'AKIAEXAMPLESECRET'],
    ['AWS_SECRETS_REGION', 'US-EAST-1'],
    ['AWS_SECRETS_REGION', 'useast1'],
    ['AWS_SECRETS_KMS_KEY_ID', 'not a key'],
    ['AWS_SECRETS_ENDPOINT', 'http://secretsmanager.example.com'],
    ['AWS_SECRETS_ENDPOINT', 'https://user:pw@example.com'],
    ['AWS_SECRETS_ENDPOINT', 'https://example.com/path'],
    ['AWS_SECRETS_CALL_TIMEOUT_MS', '-7'],
  ] as const) {
    const result = fromEnv({ ...BASE, [name]: bad });
    assert.equal(result.ok, false, `${name}=${bad}`);
    const message = result.ok ? '' : result.invalid.join('\n');
    assert.match(message, new RegExp(`^invalid environment variable ${name}: must `));
    assert.ok(!message.includes(bad), `message echoes ${bad}`);
  }
  for (const [name, good] of [
    ['AWS_SECRETS_KMS_KEY_ID', '0b7c1a6e-3f0e-4a5b-9d8e-1c2b3a4d5e6f'],
    ['AWS_SECRETS_KMS_KEY_ID', 'alias/pull-secrets'],
    ['AWS_SECRETS_KMS_KEY_ID', 'arn:aws:kms:eu-central-1:123456789012:alias/pull-secrets'],
    [
      'AWS_SECRETS_KMS_KEY_ID',
      'arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/mrk-0123456789abcdef0123456789abcdef',
    ],
    ['AWS_SECRETS_ENDPOINT', 'https://vpce-0a1b.secretsmanager.eu-central-1.vpce.amazonaws.com'],
    ['AWS_SECRETS_ENDPOINT', 'http://127.0.0.1:4566'],
    ['AWS_SECRETS_ENDPOINT', 'http://[::1]:4566/'],
  ] as const) {
    assert.equal(fromEnv({ ...BASE, [name]: good }).ok, true, `${name}=${good}`);
  }
});

test('only our AWS_SECRETS_* variables select the store; the SDK variables never do', () => {
  assert.equal(selectStoreKind({ AWS_SECRETS_REGION: 'us-east-1' }), 'aws');
  assert.equal(
    selectStoreKind({
      AWS_REGION: 'us-east-1',
      AWS_ACCOUNT_ID: '123456789012',
      AWS_ROLE_ARN: 'arn:aws:iam::1:role/x',
    }),
    'local',
  );
  assert.equal(selectStoreKind({ AWS_REGION: 'us-east-1', GCP_PROJECT_ID: 'my-project' }), 'gcp');
  assert.throws(
    () => selectStoreKind({ AWS_SECRETS_REGION: 'us-east-1', GCP_PROJECT_ID: 'my-project' }),
    /belong to different stores/,
  );
  assert.throws(
    () => selectStoreKind({ SECRET_STORE: 'gcp', AWS_SECRETS_ACCOUNT_ID: '123456789012' }),
    /gcp contradicts AWS_SECRETS_ACCOUNT_ID/,
  );
});

test('location and status data name the partition, region and account', () => {
  assert.equal(awsLocation('123456789012', 'us-east-1'), 'arn:aws:secretsmanager:us-east-1:123456789012');
  assert.equal(
    awsLocation('123456789012', 'cn-north-1'),
    'arn:aws-cn:secretsmanager:cn-north-1:123456789012',
  );
  assert.equal(
    awsLocation('123456789012', 'us-gov-west-1'),
    'arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012',
  );
  assert.deepEqual(scopeStatusData('aws', { accountId: '123456789012', region: 'eu-west-1' }), {
    location: 'arn:aws:secretsmanager:eu-west-1:123456789012',
    awsAccountId: '123456789012',
    awsRegion: 'eu-west-1',
  });
  assert.deepEqual(scopeStatusData('aws', { accountId: '123456789012' }), {}, 'both keys or nothing');
});
