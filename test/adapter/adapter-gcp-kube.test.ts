import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { status as grpcStatus } from '@grpc/grpc-js';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';
import { until } from '../support/until.js';

// The adapter with its production parts: GCP Secret Manager (real SDK, gRPC test server) and the
// Kubernetes API (real client, HTTPS test server), in-process and in Job mode.

process.env.METADATA_SERVER_DETECTION = 'none';
const PROJECT = 'customer-prod-12345';
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

describe('in-process with GCP Secret Manager and the Kubernetes API', () => {
  let gcp: SecretManagerTestServer;
  let kube: KubernetesTestServer;
  let stack: AdapterStack;
  before(async () => {
    gcp = await startSecretManagerTestServer({ project: PROJECT });
    // The adapter acts as its service account, with the in-process overlay's RBAC.
    kube = await startKubernetesTestServer({ rbac: ['overlays/in-process'] });
    stack = await startAdapterStack({
      store: { type: 'gcp', settings: { endpoint: gcp.address, insecure: true, callTimeoutMs: 5000 } },
      kubernetes: {
        target: 'api',
        kubeconfig: await kube.serviceAccountKubeconfig('hyperfleet-system', 'pullsecret-adapter'),
      },
    });
  });
  after(async () => {
    await stack?.stop();
    const forbidden = kube?.forbidden() ?? [];
    await kube?.close();
    await gcp?.stop();
    assert.deepEqual(forbidden, [], 'every call is one the shipped RBAC allows');
  });

  test("stored in the cluster's project, Secret in its namespace, no-op makes no writes", async () => {
    const cluster = await stack.seedCluster();
    kube.createNamespace(`clusters-${cluster.id}`);
    await stack.publish(cluster);
    const status = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Available') === 'True/SecretAvailable',
    );
    assert.equal(status.data?.gcpProject, PROJECT);
    assert.equal(status.data?.secretPath, `projects/${PROJECT}/secrets/hyperfleet-${cluster.id}-pull-secret`);
    const secret = kube.getObject('secrets', `clusters-${cluster.id}`, `${cluster.id}-pull-secret`) as {
      data?: Record<string, string>;
    };
    assert.equal(
      Buffer.from(secret.data?.['.dockerconfigjson'] ?? '', 'base64').toString(),
      VALID_PULL_SECRET,
    );

    // The first reconcile's last line is written after its status: wait for it before the no-op.
    const statusLogged = (from: number) =>
      until('a "Status reported" line', () => {
        const lines = stack.logs
          .slice(from)
          .map((l) => JSON.parse(l) as { level: string; message: string; cluster_id?: string });
        const end = lines.findIndex((l) => l.message === 'Status reported' && l.cluster_id === cluster.id);
        return (
          end >= 0 && {
            lines: lines.slice(0, end + 1).filter((l) => l.cluster_id === cluster.id),
            next: from + end + 1,
          }
        );
      });
    const { next } = await statusLogged(0);
    gcp.resetCalls();
    kube.resetCalls();
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Applied') === 'True/SecretUpToDate');
    assert.equal(gcp.calls.AddSecretVersion + gcp.calls.CreateSecret, 0);
    assert.equal(kube.writes('secrets'), 0);
    // At info a no-op says what came of it in two lines; its steps are debug.
    const { lines } = await statusLogged(next);
    assert.deepEqual(
      lines.filter((l) => l.level === 'info').map((l) => l.message),
      ['Pull secret reconciled', 'Status reported'],
    );
    assert.deepEqual(
      lines.filter((l) => l.level === 'debug').map((l) => l.message),
      ['Pull secret is valid', 'Read newest enabled version', 'Kubernetes Secret already up to date'],
    );
    const metrics = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    assert.match(metrics, /pullsecret_gcp_api_calls_total\{status_code="200"\} [1-9]/);
  });

  test('permission denied: failed status, Health=False with a reason, the next event recovers', async () => {
    const cluster = await stack.seedCluster();
    kube.createNamespace(`clusters-${cluster.id}`);
    gcp.injectFault({ method: 'AccessSecretVersion', code: grpcStatus.PERMISSION_DENIED });
    await stack.publish(cluster);
    const failed = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Applied') === 'False/PermissionDenied',
    );
    assert.equal(conditionOf(failed, 'Health'), 'False/PermissionDenied');
    assert.match(
      failed.conditions.find((c) => c.type === 'Applied')?.message ?? '',
      /secretmanager\.versions\.access/,
    );
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
  });

  test('deletion with cloudSecret=retain keeps the Secret Manager secret and deletes the Kubernetes Secret', async () => {
    const cluster = await stack.seedCluster();
    kube.createNamespace(`clusters-${cluster.id}`);
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    await stack.request('DELETE', `/clusters/${cluster.id}`);
    await stack.publish({ id: cluster.id, generation: stack.api.getCluster(cluster.id)?.generation ?? 2 });
    const deadline = Date.now() + 10_000;
    while (stack.api.getCluster(cluster.id) !== undefined && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(stack.api.getCluster(cluster.id), undefined);
    assert.equal(kube.getObject('secrets', `clusters-${cluster.id}`, `${cluster.id}-pull-secret`), undefined);
    assert.ok(gcp.state.findSecret(`hyperfleet-${cluster.id}-pull-secret`));
  });
});

describe('Job mode', () => {
  let kube: KubernetesTestServer;
  let stack: AdapterStack;
  before(async () => {
    kube = await startKubernetesTestServer({
      namespaces: ['hyperfleet-system'],
      // The Job overlay's RBAC: the adapter acts as its service account, the Jobs' pods as theirs.
      rbac: ['overlays/job'],
      runJobs: { command: [process.execPath, '--import', TSX, MAIN] },
    });
    stack = await startAdapterStack({
      kubernetes: {
        target: 'api',
        kubeconfig: await kube.serviceAccountKubeconfig('hyperfleet-system', 'pullsecret-adapter'),
      },
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
    const forbidden = kube?.forbidden() ?? [];
    await kube?.close();
    assert.deepEqual(forbidden, [], 'every call is one the shipped RBAC allows');
  });

  test('the cluster is provisioned through a Job and reported JobSucceeded; an invalid secret launches no Job', async () => {
    const cluster = await stack.seedCluster();
    kube.createNamespace(`clusters-${cluster.id}`);
    await stack.publish(cluster);
    const status = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Applied') === 'True/JobSucceeded',
      30_000,
    );
    assert.equal(conditionOf(status, 'Available'), 'True/SecretAvailable');
    assert.equal(status.data?.jobName, `pullsecret-${cluster.id}-gen1`);
    assert.ok(kube.getObject('jobs', 'hyperfleet-system', `pullsecret-${cluster.id}-gen1`));
    assert.ok(kube.getObject('secrets', `clusters-${cluster.id}`, `${cluster.id}-pull-secret`));

    const invalid = await stack.seedCluster({ pullSecret: { data: '{"auths":{}}' } });
    await stack.publish(invalid);
    await stack.waitForStatus(invalid.id, (s) => conditionOf(s, 'Applied') === 'False/InvalidPullSecret');
    assert.equal(kube.getObject('jobs', 'hyperfleet-system', `pullsecret-${invalid.id}-gen1`), undefined);
  });
});
