// The Secrets Manager test server's own rules, driven by the real AWS SDK over JSON 1.1 with SigV4
// (and by plain HTTP where the SDK would refuse to send what is tested).
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CreateSecretCommand,
  DeleteSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  RestoreSecretCommand,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import {
  startAwsSecretsManagerTestServer,
  TEST_CREDENTIALS,
  type AwsSecretsManagerTestServer,
} from './index.js';

let server: AwsSecretsManagerTestServer;
let client: SecretsManagerClient;
let n = 0;
const name = () => `server-test-${++n}`;
const token = (c: string) => `${c.repeat(8)}-${c.repeat(4)}-${c.repeat(4)}-${c.repeat(4)}-${c.repeat(12)}`;

function clientWith(
  credentials: { accessKeyId: string; secretAccessKey: string },
  region = server.region,
): SecretsManagerClient {
  return new SecretsManagerClient({ region, endpoint: server.endpoint, credentials, maxAttempts: 1 });
}

/** The error a command fails with, as the SDK reports it. */
async function failure(
  promise: Promise<unknown>,
): Promise<{ name: string; status: number | undefined; message: string }> {
  try {
    await promise;
  } catch (err) {
    const e = err as { name: string; message: string; $metadata?: { httpStatusCode?: number } };
    return { name: e.name, status: e.$metadata?.httpStatusCode, message: e.message };
  }
  throw new Error('expected the call to fail');
}

before(async () => {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  server = await startAwsSecretsManagerTestServer();
  client = clientWith(TEST_CREDENTIALS);
});
after(async () => {
  client.destroy();
  await server.stop();
});
beforeEach(() => {
  server.clearFaults();
  server.resetCalls();
});

describe('SigV4', () => {
  test('a wrong secret key is refused with InvalidSignatureException; an unknown key with UnrecognizedClientException', async () => {
    const wrong = clientWith({
      accessKeyId: TEST_CREDENTIALS.accessKeyId,
      secretAccessKey: 'wrong-secret-key-0000000000000000000000',
    });
    const refused = await failure(wrong.send(new DescribeSecretCommand({ SecretId: 'x' })));
    assert.equal(refused.name, 'InvalidSignatureException');
    assert.equal(refused.status, 400);
    assert.match(refused.message, /does not match the signature you provided/);
    const unknown = await failure(
      clientWith({ accessKeyId: 'AKIAUNKNOWN000000000', secretAccessKey: 'x' }).send(
        new DescribeSecretCommand({ SecretId: 'x' }),
      ),
    );
    assert.equal(unknown.name, 'UnrecognizedClientException');
    const otherRegion = await failure(
      clientWith(TEST_CREDENTIALS, 'eu-west-1').send(new DescribeSecretCommand({ SecretId: 'x' })),
    );
    assert.equal(otherRegion.name, 'InvalidSignatureException');
    assert.deepEqual(server.state.list(TEST_CREDENTIALS.accountId), []);
  });

  test('an unsigned request gets MissingAuthenticationTokenException in the JSON 1.1 error shape', async () => {
    const response = await fetch(server.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.1',
        'x-amz-target': 'secretsmanager.ListSecretVersionIds',
      },
      body: '{}',
    });
    assert.equal(response.status, 400);
    assert.equal(response.headers.get('content-type'), 'application/x-amz-json-1.1');
    assert.deepEqual(await response.json(), {
      __type: 'com.amazonaws.secretsmanager#MissingAuthenticationTokenException',
      message: 'Missing Authentication Token',
    });
  });
});

describe('rules', () => {
  test('names, tags and the 65,536-byte limit', async () => {
    assert.equal(
      (await failure(client.send(new CreateSecretCommand({ Name: 'bad name' })))).name,
      'InvalidParameterException',
    );
    assert.equal(
      (
        await failure(
          client.send(new CreateSecretCommand({ Name: name(), Tags: [{ Key: 'aws:owner', Value: 'x' }] })),
        )
      ).name,
      'InvalidParameterException',
    );
    const many = Array.from({ length: 51 }, (_, i) => ({ Key: `k${i}`, Value: 'v' }));
    assert.equal(
      (await failure(client.send(new CreateSecretCommand({ Name: name(), Tags: many })))).name,
      'ValidationException',
    );
    const secret = name();
    await client.send(new CreateSecretCommand({ Name: secret, KmsKeyId: 'alias/customer' }));
    assert.equal(
      (await client.send(new DescribeSecretCommand({ SecretId: secret }))).KmsKeyId,
      'alias/customer',
    );
    assert.equal(
      (
        await failure(
          client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'x'.repeat(65_537) })),
        )
      ).name,
      'ValidationException',
    );
    await client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'x'.repeat(65_536) }));
    assert.equal(
      (await failure(client.send(new CreateSecretCommand({ Name: secret })))).name,
      'ResourceExistsException',
    );
  });

  test('staging labels: the first version is current, AWSCURRENT moves leave AWSPREVIOUS, a swap needs the right RemoveFromVersionId', async () => {
    const secret = name();
    await client.send(new CreateSecretCommand({ Name: secret }));
    await client.send(
      new PutSecretValueCommand({
        SecretId: secret,
        ClientRequestToken: token('a'),
        SecretString: 'A',
        VersionStages: ['AWSPENDING'],
      }),
    );
    await client.send(
      new PutSecretValueCommand({ SecretId: secret, ClientRequestToken: token('b'), SecretString: 'B' }),
    );
    await client.send(
      new PutSecretValueCommand({
        SecretId: secret,
        ClientRequestToken: token('c'),
        SecretString: 'C',
        VersionStages: ['AWSPENDING'],
      }),
    );
    const stages = async () =>
      (await client.send(new DescribeSecretCommand({ SecretId: secret }))).VersionIdsToStages;
    assert.deepEqual(await stages(), {
      [token('a')]: ['AWSPREVIOUS'],
      [token('b')]: ['AWSCURRENT'],
      [token('c')]: ['AWSPENDING'],
    });
    const stale = await failure(
      client.send(
        new UpdateSecretVersionStageCommand({
          SecretId: secret,
          VersionStage: 'AWSCURRENT',
          MoveToVersionId: token('c'),
          RemoveFromVersionId: token('a'),
        }),
      ),
    );
    assert.equal(stale.name, 'InvalidParameterException');
    const none = await failure(
      client.send(
        new UpdateSecretVersionStageCommand({
          SecretId: secret,
          VersionStage: 'AWSCURRENT',
          MoveToVersionId: token('c'),
        }),
      ),
    );
    assert.equal(none.name, 'InvalidParameterException');
    await client.send(
      new UpdateSecretVersionStageCommand({
        SecretId: secret,
        VersionStage: 'AWSCURRENT',
        MoveToVersionId: token('c'),
        RemoveFromVersionId: token('b'),
      }),
    );
    assert.deepEqual(await stages(), {
      [token('b')]: ['AWSPREVIOUS'],
      [token('c')]: ['AWSPENDING', 'AWSCURRENT'],
    });
    assert.equal(
      (await client.send(new GetSecretValueCommand({ SecretId: secret, VersionStage: 'AWSPREVIOUS' })))
        .SecretString,
      'B',
    );
  });

  test('ClientRequestToken: same token and value make no new version; same token and another value is ResourceExistsException', async () => {
    const secret = name();
    await client.send(new CreateSecretCommand({ Name: secret }));
    const first = await client.send(
      new PutSecretValueCommand({ SecretId: secret, ClientRequestToken: token('d'), SecretString: 'same' }),
    );
    const again = await client.send(
      new PutSecretValueCommand({ SecretId: secret, ClientRequestToken: token('d'), SecretString: 'same' }),
    );
    assert.equal(again.VersionId, first.VersionId);
    assert.equal(server.state.find(TEST_CREDENTIALS.accountId, secret)?.versions.length, 1);
    const other = await failure(
      client.send(
        new PutSecretValueCommand({
          SecretId: secret,
          ClientRequestToken: token('d'),
          SecretString: 'other',
        }),
      ),
    );
    assert.equal(other.name, 'ResourceExistsException');
  });

  test('deletion with a recovery window refuses reads, writes and re-creation until RestoreSecret', async () => {
    const secret = name();
    await client.send(new CreateSecretCommand({ Name: secret, SecretString: 'v' }));
    assert.equal(
      (await failure(client.send(new DeleteSecretCommand({ SecretId: secret, RecoveryWindowInDays: 3 }))))
        .name,
      'InvalidParameterException',
    );
    await client.send(new DeleteSecretCommand({ SecretId: secret, RecoveryWindowInDays: 7 }));
    assert.ok(
      (await client.send(new DescribeSecretCommand({ SecretId: secret }))).DeletedDate instanceof Date,
    );
    assert.equal(
      (await failure(client.send(new GetSecretValueCommand({ SecretId: secret })))).name,
      'InvalidRequestException',
    );
    assert.equal(
      (await failure(client.send(new PutSecretValueCommand({ SecretId: secret, SecretString: 'w' })))).name,
      'InvalidRequestException',
    );
    const recreate = await failure(client.send(new CreateSecretCommand({ Name: secret })));
    assert.deepEqual(
      [recreate.name, /scheduled for deletion/.test(recreate.message)],
      ['InvalidRequestException', true],
    );
    await client.send(new RestoreSecretCommand({ SecretId: secret }));
    assert.equal((await client.send(new GetSecretValueCommand({ SecretId: secret }))).SecretString, 'v');
    await client.send(new DeleteSecretCommand({ SecretId: secret, ForceDeleteWithoutRecovery: true }));
    assert.equal(
      (await failure(client.send(new DescribeSecretCommand({ SecretId: secret })))).name,
      'ResourceNotFoundException',
    );
  });
});

describe('STS and ARNs', () => {
  test('GetCallerIdentity (AWS Query, signed for sts) names the account of the credentials; an unknown key is InvalidClientTokenId', async () => {
    const sts = (credentials: { accessKeyId: string; secretAccessKey: string }) =>
      new STSClient({ region: server.region, endpoint: server.endpoint, credentials, maxAttempts: 1 });
    const mine = sts(TEST_CREDENTIALS);
    const stranger = sts({ accessKeyId: 'AKIAUNKNOWNKEY000000', secretAccessKey: 'x'.repeat(40) });
    try {
      const identity = await mine.send(new GetCallerIdentityCommand({}));
      assert.equal(identity.Account, TEST_CREDENTIALS.accountId);
      assert.match(identity.Arn ?? '', new RegExp(`^arn:aws:sts::${TEST_CREDENTIALS.accountId}:`));
      assert.equal(
        (await failure(stranger.send(new GetCallerIdentityCommand({})))).name,
        'InvalidClientTokenId',
      );
      assert.deepEqual(
        [server.stsCalls, server.totalCalls],
        [2, 0],
        'STS calls are counted apart from Secrets Manager calls',
      );
    } finally {
      mine.destroy();
      stranger.destroy();
    }
  });

  test('a secret ARN ends in "-" and 6 random characters; CreateSecret with a value makes it AWSCURRENT under its token', async () => {
    const secret = name();
    const created = await client.send(
      new CreateSecretCommand({ Name: secret, SecretString: 'v', ClientRequestToken: token('e') }),
    );
    assert.match(
      created.ARN ?? '',
      new RegExp(
        `^arn:aws:secretsmanager:${server.region}:${TEST_CREDENTIALS.accountId}:secret:${secret}-[A-Za-z0-9]{6}$`,
      ),
    );
    assert.equal(created.VersionId, token('e'));
    const value = await client.send(new GetSecretValueCommand({ SecretId: secret }));
    assert.deepEqual([value.ARN, value.VersionStages], [created.ARN, ['AWSCURRENT']]);
  });
});

describe('faults and counts', () => {
  test('throttling and 5xx answer with AWS error shapes; a lost answer still applied the write; calls are counted', async () => {
    const secret = name();
    server.injectFault({ operation: 'CreateSecret', type: 'ThrottlingException' });
    assert.equal(
      (await failure(client.send(new CreateSecretCommand({ Name: secret })))).name,
      'ThrottlingException',
    );
    assert.equal(server.state.find(TEST_CREDENTIALS.accountId, secret), undefined);
    server.injectFault({ operation: 'CreateSecret', type: 'InternalServiceError', afterApply: true });
    const lost = await failure(client.send(new CreateSecretCommand({ Name: secret })));
    assert.deepEqual([lost.name, lost.status], ['InternalServiceError', 500]);
    assert.ok(
      server.state.find(TEST_CREDENTIALS.accountId, secret) !== undefined,
      'applied before the answer was lost',
    );
    server.injectFault({ operation: 'DescribeSecret', reset: true });
    await assert.rejects(client.send(new DescribeSecretCommand({ SecretId: secret })));
    assert.deepEqual(
      [server.calls.CreateSecret, server.calls.DescribeSecret, server.writeCalls, server.totalCalls],
      [2, 1, 2, 3],
    );
    assert.deepEqual(
      server.callLog.map((c) => c.code),
      ['ThrottlingException', 'InternalServiceError', 'RESET'],
    );
  });
});
