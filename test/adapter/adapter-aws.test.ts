import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import {
  startAwsSecretsManagerTestServer,
  TEST_CREDENTIALS,
  type AwsSecretsManagerTestServer,
} from '../servers/aws-secrets-manager/index.js';
import { startKeyVaultTestServer, type KeyVaultTestServer } from '../servers/azure-key-vault/index.js';
import { awsTestEnv, useKeyVaultIdentity } from '../support/store-harness.js';
import { jsonFixture, VALID_PULL_SECRET } from '../support/fixtures.js';
import type { Cluster } from '../../src/hyperfleet/index.js';

// One adapter serving clusters of four providers at once, by configuration alone: `gcp` on GCP
// Secret Manager (gRPC test server), `aws` on AWS Secrets Manager (JSON 1.1 + SigV4 test server,
// the cluster's account, region and KMS key), `azure` on Azure Key Vault (HTTPS test server, the
// cluster's vault, workload identity on loopback), `onprem` on the local store.

process.env.METADATA_SERVER_DETECTION = 'none';
Object.assign(process.env, awsTestEnv());
const PROJECT = 'customer-prod-12345';
const ACCOUNT = TEST_CREDENTIALS.accountId;
const NO_GCP = { platform: undefined, gcp: undefined };
/** The spec of a shared cluster fixture of each cloud: where that cloud's parameters sit. */
const specOf = (cloud: 'gcp' | 'aws' | 'azure') =>
  jsonFixture<Cluster & { spec: Record<string, unknown> }>(`clusters/${cloud}-cluster.json`).spec;
const FIXTURE_PULL_SECRET = (specOf('aws').pullSecret as { data: string }).data;
/** The tags every store puts on a secret of ours (labels on GCP), besides `cluster-id`. */
const OURS = {
  'managed-by': 'hyperfleet',
  adapter: 'pullsecret',
  'resource-type': 'pull-secret',
  'hyperfleet-version': 'v1',
};

describe('one adapter, clusters on GCP, AWS, Azure and the local store at once', () => {
  let gcp: SecretManagerTestServer;
  let aws: AwsSecretsManagerTestServer;
  let azure: KeyVaultTestServer;
  let stack: AdapterStack;
  before(async () => {
    gcp = await startSecretManagerTestServer({ project: PROJECT });
    aws = await startAwsSecretsManagerTestServer({ region: 'eu-west-1' });
    azure = await startKeyVaultTestServer();
    useKeyVaultIdentity(azure);
    stack = await startAdapterStack({
      // Write quotas small enough that one scope's burst (2 tokens) is one cluster's first run (the
      // store's create and add), so two first runs in one bucket make calls wait. AWS's first run is
      // three writes (create, put, stage move): its bucket holds 1 token and refills in about a second,
      // so two first runs in one account and region wait however slowly the machine runs them.
      providers: {
        gcp: {
          settings: { endpoint: gcp.address, insecure: true, callTimeoutMs: 5000 },
          writesPerMinute: 120,
        },
        aws: { settings: { endpoint: aws.endpoint, callTimeoutMs: 5000 }, writesPerMinute: 60 },
        azure: {
          settings: { caFile: azure.caFile, callTimeoutMs: 5000, recoverPollMs: 10 },
          writesPerMinute: 120,
        },
        onprem: { store: 'local' },
      },
      kubernetes: { target: 'none' },
    });
  });
  after(async () => {
    await stack?.stop();
    await gcp?.stop();
    await aws?.stop();
    await azure?.stop();
  });

  test("each cluster's pull secret lands in its own cloud; the AWS status names the ARN location; a no-op writes nothing", async () => {
    const onGcp = await stack.seedCluster({ gcp: { projectId: PROJECT } });
    const onAws = await stack.seedCluster({
      provider: 'aws',
      ...NO_GCP,
      aws: { accountId: ACCOUNT, region: 'eu-west-1', kmsKeyId: 'alias/customer-pull-secrets' },
    });
    const onPrem = await stack.seedCluster({ provider: 'onprem', ...NO_GCP });
    const all = [onGcp, onAws, onPrem];
    await Promise.all(all.map((c) => stack.publish(c)));
    const available = (s: Parameters<typeof conditionOf>[0]) =>
      conditionOf(s, 'Available') === 'True/SecretAvailable';
    const [gcpStatus, awsStatus, premStatus] = await Promise.all([
      stack.waitForStatus(onGcp.id, available),
      stack.waitForStatus(onAws.id, available),
      stack.waitForStatus(onPrem.id, available),
    ]);

    assert.equal(gcpStatus.data?.store, 'gcp');
    assert.equal(premStatus.data?.store, 'local');
    assert.equal(awsStatus.data?.store, 'aws');
    assert.equal(awsStatus.data?.location, `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}`);
    assert.deepEqual([awsStatus.data?.awsAccountId, awsStatus.data?.awsRegion], [ACCOUNT, 'eu-west-1']);
    const stored = aws.state.find(ACCOUNT, `hyperfleet-${onAws.id}-pull-secret`);
    // The secret's real ARN: AWS appends "-" and 6 random characters to the name.
    assert.equal(awsStatus.data?.secretPath, stored?.arn);
    assert.match(
      stored?.arn ?? '',
      new RegExp(
        `^arn:aws:secretsmanager:eu-west-1:${ACCOUNT}:secret:hyperfleet-${onAws.id}-pull-secret-[A-Za-z0-9]{6}$`,
      ),
    );
    assert.equal(stored?.kmsKeyId, 'alias/customer-pull-secrets', "created under the cluster's key");
    assert.equal(stored?.versions[0]?.string, VALID_PULL_SECRET);
    assert.equal(aws.state.list(ACCOUNT).length, 1, 'nothing of the other clusters in AWS');
    assert.equal(
      gcp.state.findSecret(`hyperfleet-${onAws.id}-pull-secret`),
      undefined,
      'nothing of the AWS cluster in GCP',
    );
    const metrics = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    assert.match(metrics, /pullsecret_store_api_calls_total\{[^}]*store="aws"[^}]*\} [1-9]/);

    aws.resetCalls();
    gcp.resetCalls();
    await Promise.all(all.map((c) => stack.publish(c)));
    const upToDate = (s: Parameters<typeof conditionOf>[0]) =>
      conditionOf(s, 'Applied') === 'True/SecretUpToDate';
    await Promise.all(all.map((c) => stack.waitForStatus(c.id, upToDate)));
    assert.deepEqual([aws.writeCalls, aws.totalCalls], [0, 1], 'the AWS no-op is one GetSecretValue');
    assert.equal(gcp.calls.CreateSecret + gcp.calls.AddSecretVersion, 0);
  });

  test("clusters shaped like each cloud's fixture: each secret in its own cloud with our tags, the status names store and location, a no-op writes nothing, quotas paced per scope", async () => {
    const metricsText = async () =>
      (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    const waits = (text: string, store: string) =>
      Number(
        new RegExp(
          `pullsecret_store_quota_waits_total\\{[^}]*store="${store}"[^}]*quota="writes"[^}]*\\} (\\d+)`,
        ).exec(text)?.[1] ?? NaN,
      );
    const before = await metricsText();

    // The fixtures' parameters where they sit; the AWS region and the vault URL point at loopback.
    const gcpSpec = specOf('gcp');
    const awsSpec = specOf('aws') as {
      aws: Record<string, string>;
      platform: { aws: Record<string, string> };
    };
    // Projects of their own: the first test's project bucket is still refilling.
    const inProject = (projectId: string) => ({
      ...gcpSpec,
      gcp: { projectId },
      platform: { type: 'gcp', gcp: { projectID: projectId, region: 'us-central1' } },
    });
    const onGcp = await stack.seedCluster(inProject('customer-prod-23456'));
    const onGcp2 = await stack.seedCluster(inProject('customer-prod-67890'));
    const onAws = await stack.seedCluster({
      ...awsSpec,
      aws: { ...awsSpec.aws, region: 'eu-west-1' },
      platform: { ...awsSpec.platform, aws: { ...awsSpec.platform.aws, region: 'eu-west-1' } },
    });
    const onAws2 = await stack.seedCluster({ ...awsSpec, aws: { ...awsSpec.aws, region: 'eu-west-1' } });
    const onAzure = await stack.seedCluster({ ...specOf('azure'), azure: { keyVaultUrl: azure.url } });
    const all = [onGcp, onGcp2, onAws, onAws2, onAzure];
    const gcpWrites = () => gcp.calls.CreateSecret + gcp.calls.AddSecretVersion;
    const [gcpWrites0, awsWrites0, azureWrites0] = [gcpWrites(), aws.writeCalls, azure.writes];
    await Promise.all(all.map((c) => stack.publish(c)));
    const available = (s: Parameters<typeof conditionOf>[0]) =>
      conditionOf(s, 'Available') === 'True/SecretAvailable';
    const [gcpStatus, gcp2Status, awsStatus, azureStatus] = await Promise.all([
      stack.waitForStatus(onGcp.id, available),
      stack.waitForStatus(onGcp2.id, available),
      stack.waitForStatus(onAws.id, available),
      stack.waitForStatus(onAzure.id, available),
      stack.waitForStatus(onAws2.id, available),
    ]);

    assert.deepEqual(
      [gcpStatus.data?.store, gcpStatus.data?.location],
      ['gcp', 'projects/customer-prod-23456'],
    );
    assert.equal(gcp2Status.data?.location, 'projects/customer-prod-67890');
    assert.deepEqual(
      [awsStatus.data?.store, awsStatus.data?.location],
      ['aws', `arn:aws:secretsmanager:eu-west-1:${ACCOUNT}`],
    );
    assert.deepEqual([azureStatus.data?.store, azureStatus.data?.location], ['azure', azure.url]);
    assert.equal(azureStatus.data?.secretPath, `${azure.url}/secrets/hyperfleet-${onAzure.id}-pull-secret`);

    const gcpSecret = gcp.state.findSecret(`hyperfleet-${onGcp.id}-pull-secret`, 'customer-prod-23456');
    assert.deepEqual(gcpSecret?.labels, { ...OURS, 'cluster-id': onGcp.id });
    const awsSecret = aws.state.find(ACCOUNT, `hyperfleet-${onAws.id}-pull-secret`);
    assert.deepEqual(Object.fromEntries((awsSecret?.tags ?? []).map((t) => [t.Key, t.Value])), {
      ...OURS,
      'cluster-id': onAws.id,
    });
    assert.equal(awsSecret?.kmsKeyId, 'alias/customer-pull-secrets', "the fixture's key");
    assert.equal(awsSecret?.versions.at(-1)?.string, FIXTURE_PULL_SECRET);
    const azureVersion = azure.state.live(`hyperfleet-${onAzure.id}-pull-secret`).versions.at(-1);
    assert.deepEqual(
      [azureVersion?.value, azureVersion?.tags],
      [FIXTURE_PULL_SECRET, { ...OURS, 'cluster-id': onAzure.id }],
    );
    // Nothing of one cloud's clusters in another's.
    for (const project of ['customer-prod-23456', 'customer-prod-67890']) {
      for (const c of [onAws, onAzure])
        assert.equal(gcp.state.findSecret(`hyperfleet-${c.id}-pull-secret`, project), undefined);
    }
    for (const c of [onGcp, onGcp2, onAzure])
      assert.equal(aws.state.find(ACCOUNT, `hyperfleet-${c.id}-pull-secret`), undefined);
    for (const c of [onGcp, onGcp2, onAws, onAws2])
      assert.throws(() => azure.state.live(`hyperfleet-${c.id}-pull-secret`));
    assert.equal(awsStatus.data?.secretPath, awsSecret?.arn, "the secret's ARN, with the suffix AWS added");
    // A new secret is created holding its value: GCP CreateSecret + AddSecretVersion, AWS CreateSecret, Key Vault one SetSecret.
    assert.deepEqual(
      [gcpWrites() - gcpWrites0, aws.writeCalls - awsWrites0, azure.writes - azureWrites0],
      [4, 2, 1],
    );

    // Paced per scope: the two GCP projects and the vault each had a bucket of their own (no wait);
    // the two AWS clusters of one account and region shared one bucket of two writes, so some waited.
    const after = await metricsText();
    assert.equal(waits(after, 'gcp') - waits(before, 'gcp'), 0, 'a bucket per GCP project');
    assert.equal(
      waits(after, 'azure') - waits(before, 'azure'),
      0,
      "the vault's bucket, apart from the other clouds'",
    );
    assert.ok(waits(after, 'aws') - waits(before, 'aws') >= 1, 'one bucket per AWS account and region');

    // The same events again: no write in any store.
    const [gcpWrites1, awsWrites1, azureWrites1] = [gcpWrites(), aws.writeCalls, azure.writes];
    await Promise.all(all.map((c) => stack.publish(c)));
    const upToDate = (s: Parameters<typeof conditionOf>[0]) =>
      conditionOf(s, 'Applied') === 'True/SecretUpToDate';
    await Promise.all(all.map((c) => stack.waitForStatus(c.id, upToDate)));
    assert.deepEqual(
      [gcpWrites() - gcpWrites1, aws.writeCalls - awsWrites1, azure.writes - azureWrites1],
      [0, 0, 0],
    );
  });
});
