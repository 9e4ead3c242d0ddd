// Two adapter replicas in one process against the Kubernetes test server (with the deployment's
// RBAC) and the account-service stand-in: one leader on the Lease runs the transfer checks and the
// share controller, the other runs neither; when the leader is killed (stopped without releasing
// the Lease) the survivor takes over once the lease has expired, and then checks and shares.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningAdapter } from '../../src/adapter/service.js';
import {
  startAccountServiceStandIn,
  type AccountServiceStandIn,
} from '../../src/dev/account-service/index.js';
import { SHARE_API_VERSION } from '../../src/kube/share-types.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { until } from '../support/until.js';

const LEASE_MS = 2000;
const CLOUD = Buffer.from('cluster-bot:cloud-token-lease-0001').toString('base64');
/** A pull secret with the cloud.openshift.com token the account service knows the cluster by. */
const SPEC = JSON.stringify({ auths: { 'cloud.openshift.com': { auth: CLOUD, email: 'bot@example.com' } } });

/** The sum of a metric family's samples on an adapter's /metrics (labels `match` when given). */
async function metric(adapter: RunningAdapter, name: string, match = ''): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${adapter.metricsPort}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => line.includes(match))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('two replicas: one leader on the Lease', () => {
  let kube: KubernetesTestServer;
  let service: AccountServiceStandIn;
  let stack: AdapterStack;
  let a: RunningAdapter;
  let b: RunningAdapter;

  before(async () => {
    kube = await startKubernetesTestServer({
      namespaces: ['team-a', 'hyperfleet-system'],
      rbac: ['overlays/in-process-shares'],
    });
    service = await startAccountServiceStandIn();
    const kubeconfig = await kube.serviceAccountKubeconfig('hyperfleet-system', 'pullsecret-adapter');
    stack = await startAdapterStack({
      kubernetes: { target: 'api', kubeconfig },
      accountService: {
        baseUrl: service.url,
        timeoutMs: 2000,
        transfer: { interval: '1s', jitter: 0, requestsPerSecond: 50 },
      },
      shares: { enabled: true, recheckSeconds: 10 },
      leaderElection: {
        identity: 'replica-a',
        leaseDuration: LEASE_MS,
        renewDeadline: 1500,
        retryPeriod: 200,
      },
    });
    a = stack.adapter;
    const replica = await stack.startReplica((c) => ({
      ...c,
      leaderElection: { ...c.leaderElection, identity: 'replica-b' },
    }));
    b = replica.adapter;
    kube.seed({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'share-user' },
      rules: [{ apiGroups: ['pullsecret.hyperfleet.io'], resources: ['pullsecretshares'], verbs: ['use'] }],
    });
    kube.seed({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'use-share', namespace: 'team-a' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'share-user' },
      subjects: [{ kind: 'Group', name: 'system:serviceaccounts:team-a' }],
    });
  });
  after(async () => {
    await stack?.stop();
    await service?.stop();
    await kube?.close();
  });

  const holder = () =>
    (kube.getObject('leases', 'hyperfleet-system', 'pullsecret-adapter')?.spec ?? {}) as Record<
      string,
      unknown
    >;
  const share = (name: string, clusterId: string) =>
    kube.seed({
      apiVersion: SHARE_API_VERSION,
      kind: 'PullSecretShare',
      metadata: { name },
      spec: { source: { clusterId }, consumers: { namespaces: ['team-a'] } },
    });

  it('checks and writes share copies from the leader only; the survivor takes over a killed leader', async () => {
    const [leader, follower] = await until('one leader', () =>
      a.leadership.leading ? [a, b] : b.leadership.leading ? [b, a] : false,
    );
    assert.equal(a.leadership.leading && b.leadership.leading, false);
    const survivorIdentity = follower === a ? 'replica-a' : 'replica-b';
    assert.equal(holder().holderIdentity, survivorIdentity === 'replica-a' ? 'replica-b' : 'replica-a');
    assert.equal(await metric(leader, 'pullsecret_leader'), 1);
    assert.equal(await metric(follower, 'pullsecret_leader'), 0);

    const clusters = [
      await stack.seedCluster({ pullSecret: { data: SPEC } }),
      await stack.seedCluster({ pullSecret: { data: SPEC } }),
    ];
    for (const cluster of clusters) {
      service.setClusterToken(cluster.id, CLOUD);
      kube.createNamespace(`clusters-${cluster.id}`);
      await stack.publish(cluster, follower);
      await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    }
    // Three intervals of checks of both clusters: all from the leader, one account service request each.
    await until(
      'three checks per cluster',
      async () => (await metric(leader, 'pullsecret_transfer_checks_total')) >= 6,
    );
    assert.equal(await metric(follower, 'pullsecret_transfer_checks_total'), 0);
    const checks = await metric(leader, 'pullsecret_transfer_checks_total');
    const calls = service.calls.transfers;
    assert.ok(calls >= checks && calls <= checks + clusters.length, `${calls} requests, ${checks} checks`);

    share('before-kill', clusters[0]!.id);
    await until('the copy', () => kube.getObject('secrets', 'team-a', 'before-kill'));
    assert.equal(await metric(leader, 'pullsecret_share_projections_total', 'created'), 1);
    assert.equal(await metric(follower, 'pullsecret_share_projections_total'), 0);

    // Killed: stops leading without giving the Lease up; the survivor waits the lease out.
    await leader.leadership.abandon();
    const killedAt = Date.now();
    await until('the survivor leads', () => follower.leadership.leading, LEASE_MS * 5);
    const handover = Date.now() - killedAt;
    assert.equal(holder().holderIdentity, survivorIdentity);
    assert.equal(holder().leaseTransitions, 1);
    assert.ok(handover >= LEASE_MS - 500, `took over after ${handover} ms, before the lease ran out`);
    assert.equal(await metric(follower, 'pullsecret_leader'), 1);

    const leaderChecks = await metric(leader, 'pullsecret_transfer_checks_total');
    await until(
      'the survivor checks',
      async () => (await metric(follower, 'pullsecret_transfer_checks_total')) >= 2,
    );
    assert.equal(await metric(leader, 'pullsecret_transfer_checks_total'), leaderChecks);
    share('after-kill', clusters[1]!.id);
    await until('the copy from the survivor', () => kube.getObject('secrets', 'team-a', 'after-kill'));
    assert.equal(await metric(follower, 'pullsecret_share_projections_total', 'created'), 1);
    assert.equal(await metric(leader, 'pullsecret_share_projections_total', 'created'), 1);

    // A clean stop (loops stopped, then the Lease released) hands over to a third replica.
    const { adapter: third } = await stack.startReplica((c) => ({
      ...c,
      leaderElection: { ...c.leaderElection, identity: 'replica-c' },
    }));
    assert.equal(third.leadership.leading, false);
    await follower.stop();
    await until('the third replica leads', () => third.leadership.leading, LEASE_MS * 5);
    assert.equal(holder().holderIdentity, 'replica-c');
    assert.equal(holder().leaseTransitions, 2);
  });
});
