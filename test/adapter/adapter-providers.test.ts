import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localStoreFactory } from '../../src/stores/local/index.js';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';
import { startKeyVaultTestServer, type KeyVaultTestServer } from '../servers/azure-key-vault/index.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';

// One adapter serving clusters of two providers at once, each on its own store: `gcp` on GCP Secret
// Manager (real SDK, gRPC test server; the cluster's customer-managed key) and `onprem` on the local
// store, by configuration alone. A provider with no entry is skipped, not failed.

process.env.METADATA_SERVER_DETECTION = 'none';
const PROJECT = 'customer-prod-12345';
const KEY = `projects/${PROJECT}/locations/global/keyRings/hyperfleet/cryptoKeys/pull-secrets`;
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');
/** The spec of a cluster that names no GCP project. */
const NO_GCP = { platform: undefined, gcp: undefined };

describe('one adapter, clusters of two providers on two stores', () => {
  let gcp: SecretManagerTestServer;
  let stack: AdapterStack;
  before(async () => {
    gcp = await startSecretManagerTestServer({ project: PROJECT });
    stack = await startAdapterStack({
      providers: {
        gcp: { settings: { endpoint: gcp.address, insecure: true, callTimeoutMs: 5000 } },
        onprem: { store: 'local' },
      },
      kubernetes: { target: 'none' },
    });
  });
  after(async () => {
    await stack?.stop();
    await gcp?.stop();
  });

  test("each cluster's pull secret goes to its provider's store; the status names the store and its location", async () => {
    const cloud = await stack.seedCluster({ gcp: { projectId: PROJECT, kmsKeyName: KEY } });
    const onprem = await stack.seedCluster({ provider: 'onprem', ...NO_GCP });
    await Promise.all([stack.publish(cloud), stack.publish(onprem)]);
    const available = (s: Parameters<typeof conditionOf>[0]) =>
      conditionOf(s, 'Available') === 'True/SecretAvailable';
    const [cloudStatus, onpremStatus] = await Promise.all([
      stack.waitForStatus(cloud.id, available),
      stack.waitForStatus(onprem.id, available),
    ]);

    assert.equal(cloudStatus.data?.store, 'gcp');
    assert.equal(cloudStatus.data?.location, `projects/${PROJECT}`);
    assert.equal(cloudStatus.data?.gcpProject, PROJECT);
    assert.equal(
      cloudStatus.data?.secretPath,
      `projects/${PROJECT}/secrets/hyperfleet-${cloud.id}-pull-secret`,
    );
    const stored = gcp.state.findSecret(`hyperfleet-${cloud.id}-pull-secret`);
    assert.deepEqual(
      stored?.replication,
      { automatic: { customerManagedEncryption: { kmsKeyName: KEY } } },
      "created under the cluster's key",
    );

    assert.equal(onpremStatus.data?.store, 'local');
    assert.equal(onpremStatus.data?.location, undefined, 'the local store has no scope');
    assert.equal(onpremStatus.data?.gcpProject, undefined);
    assert.equal(
      gcp.state.findSecret(`hyperfleet-${onprem.id}-pull-secret`),
      undefined,
      'nothing of the onprem cluster in GCP',
    );
    const local = await localStoreFactory.create(
      localStoreFactory.configSchema.parse({ dir: join(stack.dir, 'store') }),
    );
    try {
      assert.equal(
        (await local.accessLatestEnabled(`hyperfleet-${onprem.id}-pull-secret`))?.data.toString(),
        VALID_PULL_SECRET,
      );
      assert.equal(
        await local.getSecret(`hyperfleet-${cloud.id}-pull-secret`),
        undefined,
        'nothing of the gcp cluster in the local store',
      );
    } finally {
      await local.close();
    }
    const metrics = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    assert.match(metrics, /pullsecret_store_api_calls_total\{[^}]*store="gcp"[^}]*\} [1-9]/);
    assert.match(metrics, /pullsecret_store_api_calls_total\{[^}]*store="local"[^}]*\} [1-9]/);

    // The same content again: no write on either store.
    gcp.resetCalls();
    await Promise.all([stack.publish(cloud), stack.publish(onprem)]);
    const upToDate = (s: Parameters<typeof conditionOf>[0]) =>
      conditionOf(s, 'Applied') === 'True/SecretUpToDate';
    await Promise.all([stack.waitForStatus(cloud.id, upToDate), stack.waitForStatus(onprem.id, upToDate)]);
    assert.equal(gcp.calls.CreateSecret + gcp.calls.AddSecretVersion, 0);
  });

  test("a provider with no entry is skipped with a clear message; a provider's own rule skips its clusters", async () => {
    const aws = await stack.seedCluster({
      provider: 'aws',
      ...NO_GCP,
      aws: { accountId: '123456789012', region: 'us-east-1' },
    });
    const noProject = await stack.seedCluster(NO_GCP);
    await Promise.all([stack.publish(aws), stack.publish(noProject)]);
    const skipped = (s: Parameters<typeof conditionOf>[0]) =>
      conditionOf(s, 'Applied') === 'False/PreconditionNotMet';
    const [awsStatus, noProjectStatus] = await Promise.all([
      stack.waitForStatus(aws.id, skipped),
      stack.waitForStatus(noProject.id, skipped),
    ]);
    assert.equal(awsStatus.data?.precondition, 'provider');
    assert.match(
      awsStatus.conditions.find((c) => c.type === 'Applied')?.message ?? '',
      /the cluster provider "aws" is not served by this adapter \(it serves gcp, onprem\)/,
    );
    assert.equal(conditionOf(awsStatus, 'Health'), 'True/Healthy');
    assert.equal(noProjectStatus.data?.precondition, 'project-id');

    // Its deletion is confirmed at once: nothing was written for it.
    await stack.request('DELETE', `/clusters/${aws.id}`);
    await stack.publish({ id: aws.id, generation: stack.api.getCluster(aws.id)?.generation ?? 2 });
    const deadline = Date.now() + 10_000;
    while (stack.api.getCluster(aws.id) !== undefined && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(stack.api.getCluster(aws.id), undefined);
  });
});

describe("Job mode: each Job runs on its cluster's store", () => {
  let gcp: SecretManagerTestServer;
  let azure: KeyVaultTestServer;
  let kube: KubernetesTestServer;
  let stack: AdapterStack;
  before(async () => {
    gcp = await startSecretManagerTestServer({ project: PROJECT });
    azure = await startKeyVaultTestServer();
    // The AKS workload identity webhook: the identity variables reach only pods with its label.
    const { AZURE_KEY_VAULT_URL: _url, AZURE_KEY_VAULT_CA_FILE: _ca, ...identity } = azure.env();
    const webhooks = [{ podLabels: { 'azure.workload.identity/use': 'true' }, env: identity }];
    // The test CA reaches every pod by other means (in the Job's env, a path under /tmp would be taken for its emptyDir).
    const caFile = azure.caFile;
    kube = await startKubernetesTestServer({
      namespaces: ['hyperfleet-system'],
      runJobs: {
        command: [process.execPath, '--import', TSX, MAIN],
        webhooks,
        env: { AZURE_KEY_VAULT_CA_FILE: caFile },
      },
    });
    stack = await startAdapterStack({
      providers: {
        gcp: { settings: { endpoint: gcp.address, insecure: true, callTimeoutMs: 5000 } },
        azure: { settings: { callTimeoutMs: 5000 } },
        onprem: { store: 'local' },
      },
      kubernetes: { target: 'none', kubeconfig: kube.kubeconfigPath },
      execution: {
        mode: 'job',
        job: {
          namespace: 'hyperfleet-system',
          image: 'pull-secret:test',
          timeoutSeconds: 60,
          waitSeconds: 30,
        },
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await kube?.close();
    await gcp?.stop();
    await azure?.stop();
  });

  test("SECRET_STORE and the cluster's own settings reach its Job; the GCP Job creates the secret under the cluster's key", async () => {
    const cloud = await stack.seedCluster({ gcp: { projectId: PROJECT, kmsKeyName: KEY } });
    const onprem = await stack.seedCluster({ provider: 'onprem', ...NO_GCP });
    await Promise.all([stack.publish(cloud), stack.publish(onprem)]);
    const succeeded = (s: Parameters<typeof conditionOf>[0]) =>
      conditionOf(s, 'Applied') === 'True/JobSucceeded';
    const [cloudStatus, onpremStatus] = await Promise.all([
      stack.waitForStatus(cloud.id, succeeded, 60_000),
      stack.waitForStatus(onprem.id, succeeded, 60_000),
    ]);
    assert.equal(cloudStatus.data?.location, `projects/${PROJECT}`);
    assert.equal(onpremStatus.data?.store, 'local');
    const envOf = (id: string) => {
      const job = kube.getObject('jobs', 'hyperfleet-system', `pullsecret-${id}-gen1`) as unknown as {
        spec: {
          template: { spec: { containers: Array<{ env?: Array<{ name: string; value?: string }> }> } };
        };
      };
      return Object.fromEntries(
        (job.spec.template.spec.containers[0]?.env ?? [])
          .filter((e) => e.value !== undefined)
          .map((e) => [e.name, e.value]),
      );
    };
    const cloudEnv = envOf(cloud.id);
    assert.equal(cloudEnv.SECRET_STORE, 'gcp');
    assert.equal(cloudEnv.GCP_PROJECT_ID, PROJECT);
    assert.equal(cloudEnv.GCP_KMS_KEY_NAME, KEY);
    assert.equal(cloudEnv.SECRET_MANAGER_ENDPOINT, gcp.address);
    assert.equal(cloudEnv.LOCAL_STORE_DIR, undefined);
    const onpremEnv = envOf(onprem.id);
    assert.equal(onpremEnv.SECRET_STORE, 'local');
    assert.equal(onpremEnv.GCP_PROJECT_ID, undefined);
    assert.deepEqual(gcp.state.findSecret(`hyperfleet-${cloud.id}-pull-secret`)?.replication, {
      automatic: { customerManagedEncryption: { kmsKeyName: KEY } },
    });
    assert.equal(gcp.state.findSecret(`hyperfleet-${onprem.id}-pull-secret`), undefined);
  });

  test("an Azure cluster's Job pod carries the workload identity label, so the webhook's identity reaches it and the secret lands in the vault", async () => {
    const onAzure = await stack.seedCluster({
      provider: 'azure',
      ...NO_GCP,
      azure: { keyVaultUrl: azure.url },
    });
    await stack.publish(onAzure);
    const status = await stack.waitForStatus(
      onAzure.id,
      (s) => conditionOf(s, 'Applied') === 'True/JobSucceeded',
      60_000,
    );
    assert.deepEqual([status.data?.store, status.data?.location], ['azure', azure.url]);
    const job = kube.getObject('jobs', 'hyperfleet-system', `pullsecret-${onAzure.id}-gen1`) as unknown as {
      spec: { template: { metadata: { labels: Record<string, string> } } };
    };
    assert.equal(job.spec.template.metadata.labels['azure.workload.identity/use'], 'true');
    assert.equal(
      azure.state.live(`hyperfleet-${onAzure.id}-pull-secret`).versions.at(-1)?.value,
      VALID_PULL_SECRET,
    );
  });
});
