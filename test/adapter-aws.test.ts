import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { conditionOf, startAdapterStack, type AdapterStack } from './support/adapter-stack.js';
import { startSecretManagerTestServer, type SecretManagerTestServer } from './servers/gcp-secret-manager/index.js';
import { startAwsSecretsManagerTestServer, TEST_CREDENTIALS, type AwsSecretsManagerTestServer } from './servers/aws-secrets-manager/index.js';
import { awsTestEnv } from './support/store-harness.js';
import { VALID_PULL_SECRET } from './support/fixtures.js';

// One adapter serving clusters of three providers at once, by configuration alone: `gcp` on GCP
// Secret Manager (gRPC test server), `aws` on AWS Secrets Manager (JSON 1.1 + SigV4 test server,
// the cluster's account, region and KMS key), `onprem` on the local store.

process.env.METADATA_SERVER_DETECTION = 'none';
Object.assign(process.env, awsTestEnv());
const PROJECT = 'customer-prod-12345';
const ACCOUNT = TEST_CREDENTIALS.accountId;
const NO_GCP = { platform: undefined, gcp: undefined };

describe('one adapter, clusters on GCP, AWS and the local store at once', () => {
  let gcp: SecretManagerTestServer;
  let aws: AwsSecretsManagerTestServer;
  let stack: AdapterStack;
  before(async () => {
    gcp = await startSecretManagerTestServer({ project: PROJECT });
    aws = await startAwsSecretsManagerTestServer({ region: 'eu-west-1' });
    stack = await startAdapterStack({
      providers: {
        gcp: { settings: { endpoint: gcp.address, insecure: true, callTimeoutMs: 5000 } },
        aws: { settings: { endpoint: aws.endpoint, callTimeoutMs: 5000 } },
        onprem: { store: 'local' },
      },
      kubernetes: { target: 'none' },
    });
  });
  after(async () => {
    await stack?.stop();
    await gcp?.stop();
    await aws?.stop();
  });

  test("each cluster's pull secret lands in its own cloud; the AWS status names the ARN location; a no-op writes nothing", async () => {
    const onGcp = await stack.seedCluster({ gcp: { projectId: PROJECT } });
    const onAws = await stack.seedCluster({ provider: 'aws', ...NO_GCP, aws: { accountId: ACCOUNT, region: 'eu-west-1', kmsKeyId: 'alias/customer-pull-secrets' } });
    const onPrem = await stack.seedCluster({ provider: 'onprem', ...NO_GCP });
    const all = [onGcp, onAws, onPrem];
    await Promise.all(all.map((c) => stack.publish(c)));
    const available = (s: Parameters<typeof conditionOf>[0]) => conditionOf(s, 'Available') === 'True/SecretAvailable';
    const [gcpStatus, awsStatus, premStatus] = await Promise.all([stack.waitForStatus(onGcp.id, available), stack.waitForStatus(onAws.id, available), stack.waitForStatus(onPrem.id, available)]);

    assert.equal(gcpStatus.data?.store, 'gcp');
    assert.equal(premStatus.data?.store, 'local');
    assert.equal(awsStatus.data?.store, 'aws');
    assert.equal(awsStatus.data?.location, `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}`);
    assert.deepEqual([awsStatus.data?.awsAccountId, awsStatus.data?.awsRegion], [ACCOUNT, 'eu-west-1']);
    assert.equal(awsStatus.data?.secretPath, `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:hyperfleet-${onAws.id}-pull-secret`);
    const stored = aws.state.find(ACCOUNT, `hyperfleet-${onAws.id}-pull-secret`);
    assert.equal(stored?.kmsKeyId, 'alias/customer-pull-secrets', "created under the cluster's key");
    assert.equal(stored?.versions[0]?.string, VALID_PULL_SECRET);
    assert.equal(aws.state.list(ACCOUNT).length, 1, 'nothing of the other clusters in AWS');
    assert.equal(gcp.state.findSecret(`hyperfleet-${onAws.id}-pull-secret`), undefined, 'nothing of the AWS cluster in GCP');
    const metrics = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    assert.match(metrics, /pullsecret_store_api_calls_total\{[^}]*store="aws"[^}]*\} [1-9]/);

    aws.resetCalls();
    gcp.resetCalls();
    await Promise.all(all.map((c) => stack.publish(c)));
    const upToDate = (s: Parameters<typeof conditionOf>[0]) => conditionOf(s, 'Applied') === 'True/SecretUpToDate';
    await Promise.all(all.map((c) => stack.waitForStatus(c.id, upToDate)));
    assert.deepEqual([aws.writeCalls, aws.totalCalls], [0, 1], 'the AWS no-op is one GetSecretValue');
    assert.equal(gcp.calls.CreateSecret + gcp.calls.AddSecretVersion, 0);
  });
});
