// Leader election on a coordination.k8s.io/v1 Lease (src/kube/leader-election.ts) through the real
// @kubernetes/client-node against the Kubernetes test server: one leader of two candidates, the
// Lease's fields as client-go writes them, a release on a clean stop handing over at once, a killed
// leader's Lease taken only once it expired, 409 on a stale update; and the Lease grants the
// deployment ships (deploy/base/rbac.yaml) through the test server's RBAC.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoordinationV1Api, KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { LeaderElector, type LeaseSettings } from '../../src/kube/leader-election.js';
import { makeApiClient } from '../../src/kube/client.js';
import { createLogger } from '../../src/observability/logger.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';
import { until } from '../support/until.js';

const NAMESPACE = 'hyperfleet-system';

/** A Lease client acting as the kubeconfig's user. */
function apiOf(kubeconfigPath: string): CoordinationV1Api {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return makeApiClient(kc, CoordinationV1Api);
}
const TIMING = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 100 };
const logger = createLogger({ level: 'silent' });

describe('LeaderElector (coordination.k8s.io/v1 Lease)', () => {
  let server: KubernetesTestServer;
  let api: CoordinationV1Api;
  const electors: LeaderElector[] = [];

  before(async () => {
    server = await startKubernetesTestServer({ namespaces: [NAMESPACE] });
    api = apiOf(server.kubeconfigPath);
  });
  after(async () => {
    await Promise.all(electors.map((e) => e.stop({ release: false })));
    await server.close();
  });

  const candidate = (name: string, identity: string) => {
    const changes: boolean[] = [];
    const settings: LeaseSettings = { name, namespace: NAMESPACE, identity, ...TIMING };
    const elector = new LeaderElector({ api, settings, logger, onChange: (l) => changes.push(l) });
    electors.push(elector);
    elector.start();
    return { elector, changes };
  };
  const lease = (name: string) => server.getObject('leases', NAMESPACE, name) as V1Lease | undefined;
  const spec = (name: string) => (lease(name)?.spec ?? {}) as Record<string, unknown>;

  it('elects one of two candidates and writes the Lease as client-go does', async () => {
    const a = candidate('one-leader', 'pod-a');
    const b = candidate('one-leader', 'pod-b');
    const leader = await until('a leader', () => (a.elector.isLeader ? a : b.elector.isLeader ? b : false));
    // Renewed a few times meanwhile: still one leader, and the other never led.
    const first = String(spec('one-leader').renewTime);
    await until('a renewal', () => String(spec('one-leader').renewTime) !== first);
    assert.equal(a.elector.isLeader && b.elector.isLeader, false);
    const other = leader === a ? b : a;
    assert.deepEqual(other.changes, []);
    assert.deepEqual(leader.changes, [true]);
    const s = spec('one-leader');
    assert.equal(s.holderIdentity, leader === a ? 'pod-a' : 'pod-b');
    assert.equal(s.leaseDurationSeconds, 2);
    assert.equal(s.leaseTransitions, 0);
    assert.match(String(s.acquireTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.match(String(s.renewTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('hands over at once when the leader stops cleanly (the Lease released)', async () => {
    const a = candidate('release', 'pod-a');
    await until('pod-a leads', () => a.elector.isLeader);
    const b = candidate('release', 'pod-b');
    await a.elector.stop({ release: true });
    assert.deepEqual(a.changes, [true, false]);
    // Released: no holder and a 1 s lease, so pod-b takes it at its next try, not after 2 s.
    await until('pod-b leads', () => b.elector.isLeader);
    const s = spec('release');
    assert.equal(s.holderIdentity, 'pod-b');
    assert.equal(s.leaseTransitions, 1);
  });

  it('lets the survivor take a killed leader’s Lease only once it expired', async () => {
    const a = candidate('killed', 'pod-a');
    await until('pod-a leads', () => a.elector.isLeader);
    const b = candidate('killed', 'pod-b');
    // Stopped without releasing, as a crashed pod: its last renewal stands.
    await a.elector.stop({ release: false });
    const lastRenew = Date.parse(String(spec('killed').renewTime));
    await until('pod-b leads', () => b.elector.isLeader, TIMING.leaseDurationMs * 5);
    const s = spec('killed');
    assert.equal(s.holderIdentity, 'pod-b');
    assert.equal(s.leaseTransitions, 1);
    // Not before the lease ran out (measured from the last renewal pod-b could have seen).
    assert.ok(Date.parse(String(s.acquireTime)) >= lastRenew + TIMING.leaseDurationMs);
  });

  it('steps down when it cannot renew for the renew deadline, and leads again once it can', async () => {
    const a = candidate('unrenewable', 'pod-a');
    await until('pod-a leads', () => a.elector.isLeader);
    const heal = server.injectFault({ resource: 'leases', status: 503, times: Infinity });
    // Stopped before its Lease could expire for anyone else (renew deadline 1.5 s < lease 2 s).
    await until('pod-a steps down', () => !a.elector.isLeader, TIMING.leaseDurationMs * 5);
    assert.deepEqual(a.changes, [true, false]);
    heal();
    await until('pod-a leads again', () => a.elector.isLeader, TIMING.leaseDurationMs * 5);
    assert.deepEqual(a.changes, [true, false, true]);
    assert.equal(spec('unrenewable').leaseTransitions, 0, 'the same holder: no transition');
  });

  it('refuses an update at a stale resourceVersion with 409 Conflict', async () => {
    const a = candidate('conflict', 'pod-a');
    await until('pod-a leads', () => a.elector.isLeader);
    const read = await api.readNamespacedLease({ name: 'conflict', namespace: NAMESPACE });
    await until(
      'a renewal',
      () => lease('conflict')?.metadata?.resourceVersion !== read.metadata?.resourceVersion,
    );
    const stale = { ...read, spec: { ...read.spec, holderIdentity: 'intruder' } };
    await assert.rejects(
      api.replaceNamespacedLease({ name: 'conflict', namespace: NAMESPACE, body: stale }),
      (err: { code?: number }) => err.code === 409,
    );
    assert.equal(spec('conflict').holderIdentity, 'pod-a');
  });
});

describe('the leader election grants the deployment ships (deploy/base/rbac.yaml)', () => {
  let server: KubernetesTestServer;
  before(async () => {
    server = await startKubernetesTestServer({
      namespaces: ['team-a', 'hyperfleet-system'],
      rbac: ['overlays/in-process'],
    });
  });
  after(() => server.close());

  it('lets the adapter create, read and update its Lease, and no other Lease or namespace', async () => {
    const leases = apiOf(await server.serviceAccountKubeconfig('hyperfleet-system', 'pullsecret-adapter'));
    const body = { metadata: { name: 'pullsecret-adapter' }, spec: { holderIdentity: 'pod-a' } };
    await leases.createNamespacedLease({ namespace: 'hyperfleet-system', body });
    const lease = await leases.readNamespacedLease({
      namespace: 'hyperfleet-system',
      name: 'pullsecret-adapter',
    });
    const renewed = { ...lease, spec: { ...lease.spec, holderIdentity: 'pod-b' } };
    await leases.replaceNamespacedLease({
      namespace: 'hyperfleet-system',
      name: 'pullsecret-adapter',
      body: renewed,
    });
    server.seed({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'other', namespace: 'hyperfleet-system' },
      spec: {},
    });
    const refused = (e: unknown) => (e as { code?: number }).code === 403;
    await assert.rejects(
      leases.readNamespacedLease({ namespace: 'hyperfleet-system', name: 'other' }),
      refused,
    );
    await assert.rejects(leases.createNamespacedLease({ namespace: 'team-a', body }), refused);
    await assert.rejects(
      leases.deleteNamespacedLease({ namespace: 'hyperfleet-system', name: 'pullsecret-adapter' }),
      refused,
    );
  });
});
