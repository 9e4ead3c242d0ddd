// PullSecretShares end to end against the Kubernetes test server, through the real client: access
// reviews before every copy, revocation, propagation, deletion, foreign Secrets, imagePullSecrets
// patches, and the canary that must appear only in the Secret copies.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import type { ShareController } from '../../src/shares/controller.js';
import { SHARE_API_VERSION } from '../../src/kube/share-types.js';
import { CANARY_PULL_SECRET, findCanary, VALID_PULL_SECRET } from '../support/fixtures.js';
import {
  startKubernetesTestServer,
  type KubeObject,
  type KubernetesTestServer,
} from '../servers/kubernetes/server.js';
import { until } from '../support/until.js';
import { startShareController } from './share-controller-harness.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

function source(clusterId: string, payload: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: `${clusterId}-pull-secret`,
      namespace: `clusters-${clusterId}`,
      labels: { 'managed-by': 'hyperfleet', 'cluster-id': clusterId },
    },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': b64(payload) },
  };
}

function share(name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: SHARE_API_VERSION, kind: 'PullSecretShare', metadata: { name }, spec };
}

/** A Role granting `use` on one share, bound to a service account of the namespace. */
function grant(server: KubernetesTestServer, namespace: string, shareName: string, sa = 'default'): void {
  if (server.getObject('roles', namespace, `use-${shareName}`) === undefined)
    server.seed({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: `use-${shareName}`, namespace },
      rules: [
        {
          apiGroups: ['pullsecret.hyperfleet.io'],
          resources: ['pullsecretshares'],
          resourceNames: [shareName],
          verbs: ['use'],
        },
      ],
    });
  if (server.getObject('rolebindings', namespace, `use-${shareName}-${sa}`) === undefined)
    server.seed({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: `use-${shareName}-${sa}`, namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `use-${shareName}` },
      subjects: [{ kind: 'ServiceAccount', name: sa }],
    });
}

type Status = {
  observedGeneration?: number;
  conditions?: { type: string; status: string; reason: string }[];
  consumers?: { namespace: string; result: string; deniedServiceAccounts?: string[] }[];
};

describe('PullSecretShare controller', () => {
  let server: KubernetesTestServer;
  let controller: ShareController;
  let registry: Registry;
  let logs: string[];
  const statusOf = (name: string) =>
    (server.getObject('pullsecretshares', undefined, name)?.status ?? {}) as Status;
  const consumer = (name: string, ns: string) => statusOf(name).consumers?.find((c) => c.namespace === ns);
  const copy = (ns: string, name: string) => server.getObject('secrets', ns, name);
  const payloadOf = (ns: string, name: string) =>
    Buffer.from(
      String((copy(ns, name)?.data as Record<string, string> | undefined)?.['.dockerconfigjson'] ?? ''),
      'base64',
    ).toString();

  before(async () => {
    server = await startKubernetesTestServer({
      namespaces: ['clusters-c1', 'team-a', 'team-b', 'team-c', 'team-d'],
    });
    server.seed(source('c1', CANARY_PULL_SECRET));
    ({ controller, registry, logs } = startShareController(server));
  });
  after(async () => {
    await controller.stop();
    await server.close();
  });

  it('copies into the granted namespace only and lists the denial', async () => {
    grant(server, 'team-a', 'shared');
    server.seed(
      share('shared', {
        source: { clusterId: 'c1', kind: 'pullSecret' },
        consumers: { namespaces: ['team-a', 'team-b'] },
      }),
    );
    await until('both consumers reported', () => statusOf('shared').consumers?.length === 2);
    assert.equal(consumer('shared', 'team-a')?.result, 'granted');
    assert.equal(consumer('shared', 'team-b')?.result, 'denied');
    assert.deepEqual(consumer('shared', 'team-b')?.deniedServiceAccounts, ['default']);
    assert.equal(payloadOf('team-a', 'shared'), CANARY_PULL_SECRET);
    assert.equal(copy('team-a', 'shared')?.type, 'kubernetes.io/dockerconfigjson');
    assert.equal(
      copy('team-b', 'shared'),
      undefined,
      'a namespace that was not granted never receives the share',
    );
    const owner = (copy('team-a', 'shared')?.metadata.ownerReferences as { uid: string; kind: string }[])[0];
    assert.equal(owner?.uid, server.getObject('pullsecretshares', undefined, 'shared')?.metadata.uid);
    assert.equal(copy('team-a', 'shared')?.metadata.labels?.['pullsecret.hyperfleet.io/share'], 'shared');
    const ready = statusOf('shared').conditions?.[0];
    assert.equal(ready?.type, 'Ready');
    assert.equal(ready?.status, 'True');
    assert.equal(statusOf('shared').observedGeneration, 1);
  });

  it('projects once a grant appears, and removes the copy when it is revoked', async () => {
    grant(server, 'team-b', 'shared');
    await until('team-b granted', () => consumer('shared', 'team-b')?.result === 'granted');
    assert.equal(payloadOf('team-b', 'shared'), CANARY_PULL_SECRET);
    server.deleteObject('rolebindings', 'team-b', 'use-shared-default');
    await until('team-b denied again', () => consumer('shared', 'team-b')?.result === 'denied');
    assert.equal(copy('team-b', 'shared'), undefined);
    assert.ok(copy('team-a', 'shared'), 'the other consumer keeps its copy');
  });

  it('brings a source update to every copy', async () => {
    grant(server, 'team-b', 'shared');
    await until(
      'team-b granted',
      () => consumer('shared', 'team-b')?.result === 'granted' && copy('team-b', 'shared') !== undefined,
    );
    const updated = source('c1', VALID_PULL_SECRET);
    const stored = server.getObject('secrets', 'clusters-c1', 'c1-pull-secret');
    assert.ok(stored);
    server.deleteObject('secrets', 'clusters-c1', 'c1-pull-secret');
    await until(
      'copies removed with the source, and reported',
      () => statusOf('shared').conditions?.[0]?.reason === 'SourceNotFound',
    );
    assert.equal(copy('team-a', 'shared'), undefined);
    assert.equal(copy('team-b', 'shared'), undefined);
    server.seed(updated);
    await until(
      'new data in every copy',
      () =>
        payloadOf('team-a', 'shared') === VALID_PULL_SECRET &&
        payloadOf('team-b', 'shared') === VALID_PULL_SECRET,
    );
    server.deleteObject('secrets', 'clusters-c1', 'c1-pull-secret');
    server.seed(source('c1', CANARY_PULL_SECRET));
    await until(
      'canary back in every copy',
      () =>
        payloadOf('team-a', 'shared') === CANARY_PULL_SECRET &&
        payloadOf('team-b', 'shared') === CANARY_PULL_SECRET,
    );
  });

  it('never overwrites a Secret it does not own', async () => {
    server.seed({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'shared', namespace: 'team-c' },
      type: 'Opaque',
      data: { mine: b64('keep me') },
    });
    grant(server, 'team-c', 'shared');
    const spec = server.getObject('pullsecretshares', undefined, 'shared');
    assert.ok(spec);
    server.deleteObject('pullsecretshares', undefined, 'shared');
    await until(
      'copies removed with the share',
      () => copy('team-a', 'shared') === undefined && copy('team-b', 'shared') === undefined,
    );
    server.seed(
      share('shared', { source: { clusterId: 'c1' }, consumers: { namespaces: ['team-a', 'team-c'] } }),
    );
    await until(
      'team-c reported',
      () => consumer('shared', 'team-c') !== undefined && consumer('shared', 'team-a') !== undefined,
    );
    assert.equal(consumer('shared', 'team-c')?.result, 'conflict');
    assert.equal(statusOf('shared').conditions?.[0]?.reason, 'ConsumersFailed');
    const foreign = copy('team-c', 'shared');
    assert.deepEqual(foreign?.data, { mine: b64('keep me') });
    assert.equal(foreign?.metadata.labels, undefined);
    assert.equal(consumer('shared', 'team-a')?.result, 'granted');
    // Checked again (access reviews and conflicts forgotten): still untouched.
    controller.recheck();
    await controller.idle();
    assert.deepEqual(copy('team-c', 'shared'), foreign);
    assert.equal(consumer('shared', 'team-c')?.result, 'conflict');
  });

  it('adds the copy to the granted service accounts keeping other entries, and takes it out on revocation', async () => {
    server.seed({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'builder', namespace: 'team-d' },
      imagePullSecrets: [{ name: 'theirs' }],
    });
    grant(server, 'team-d', 'builds', 'builder');
    server.seed(
      share('builds', {
        source: { clusterId: 'c1' },
        consumers: { namespaces: ['team-d'], serviceAccounts: ['builder'] },
        target: { secretName: 'registry-creds', imagePullSecrets: true },
      }),
    );
    const entries = () =>
      (
        (server.getObject('serviceaccounts', 'team-d', 'builder')?.imagePullSecrets as
          { name: string }[] | undefined) ?? []
      ).map((r) => r.name);
    await until('entry added', () => entries().includes('registry-creds'));
    assert.deepEqual(entries(), ['theirs', 'registry-creds']);
    assert.equal(payloadOf('team-d', 'registry-creds'), CANARY_PULL_SECRET);
    server.deleteObject('rolebindings', 'team-d', 'use-builds-builder');
    await until('denial reported', () => consumer('builds', 'team-d')?.result === 'denied');
    assert.equal(copy('team-d', 'registry-creds'), undefined);
    assert.deepEqual(entries(), ['theirs']);
  });

  it('selects namespaces by label', async () => {
    server.createNamespace('labelled', { 'pull-secrets': 'yes' });
    grant(server, 'labelled', 'by-label');
    server.seed(
      share('by-label', {
        source: { clusterId: 'c1' },
        consumers: { namespaceSelector: { matchLabels: { 'pull-secrets': 'yes' } } },
      }),
    );
    await until('labelled namespace granted', () => consumer('by-label', 'labelled')?.result === 'granted');
    assert.equal(statusOf('by-label').consumers?.length, 1);
  });

  it('reports invalid shares, and entitlement shares of a cluster without one, without copying', async () => {
    server.seed(
      share('ent', {
        source: { clusterId: 'c1', kind: 'entitlement' },
        consumers: { namespaces: ['team-a'] },
      }),
    );
    server.seed(share('bad', { source: { clusterId: 'C1!' }, consumers: { namespaces: ['team-a'] } }));
    await until(
      'both reported',
      () => statusOf('ent').conditions !== undefined && statusOf('bad').conditions !== undefined,
    );
    // c1 has a pull secret but no entitlement: the pull secret is never shared in its place.
    assert.equal(statusOf('ent').conditions?.[0]?.reason, 'SourceNotFound');
    assert.equal(statusOf('bad').conditions?.[0]?.reason, 'InvalidSpec');
    assert.equal(copy('team-a', 'ent'), undefined);
  });

  it('reports a failed access review as an error of that consumer, copies nothing, and recovers', async () => {
    grant(server, 'team-b', 'flaky');
    const removeFault = server.injectFault({
      method: 'POST',
      resource: 'subjectaccessreviews',
      status: 403,
      times: Infinity,
    });
    server.seed(share('flaky', { source: { clusterId: 'c1' }, consumers: { namespaces: ['team-b'] } }));
    await until('error reported', () => consumer('flaky', 'team-b')?.result === 'error');
    assert.match(JSON.stringify(consumer('flaky', 'team-b')), /HTTP 403/);
    assert.equal(statusOf('flaky').conditions?.[0]?.reason, 'ConsumersFailed');
    assert.equal(copy('team-b', 'flaky'), undefined);
    removeFault();
    controller.recheck();
    await until('granted after the recheck', () => consumer('flaky', 'team-b')?.result === 'granted');
    assert.equal(payloadOf('team-b', 'flaky'), CANARY_PULL_SECRET);
    server.deleteObject('pullsecretshares', undefined, 'flaky');
    await until('copy removed with the share', () => copy('team-b', 'flaky') === undefined);
  });

  it('leaves out a consumer namespace being deleted: no ConsumersFailed for its 403 (NamespaceLifecycle)', async () => {
    server.createNamespace('leaving');
    grant(server, 'leaving', 'going');
    grant(server, 'team-a', 'going');
    const release = server.holdNamespaceTermination();
    try {
      server.deleteObject('namespaces', undefined, 'leaving');
      server.seed(
        share('going', { source: { clusterId: 'c1' }, consumers: { namespaces: ['leaving', 'team-a'] } }),
      );
      await until('the share reported', () => statusOf('going').conditions?.[0]?.reason !== undefined);
      assert.equal(statusOf('going').conditions?.[0]?.reason, 'Projected', JSON.stringify(statusOf('going')));
      assert.deepEqual(
        statusOf('going').consumers?.map((c) => `${c.namespace} ${c.result}`),
        ['team-a granted'],
      );
    } finally {
      release();
    }
    server.deleteObject('pullsecretshares', undefined, 'going');
    await until('copy removed with the share', () => copy('team-a', 'going') === undefined);
  });

  it('makes no Kubernetes call for unchanged consumers on a resync', async () => {
    await controller.idle();
    server.resetCalls();
    controller.resync();
    await controller.idle();
    assert.equal(server.requests().filter((r) => r.method !== 'WATCH').length, 0);
  });

  it('keeps the canary out of logs, metrics, statuses and events', async () => {
    const text = [
      logs.join(''),
      await registry.metrics(),
      JSON.stringify(server.listObjects('pullsecretshares')),
      JSON.stringify(server.listObjects('serviceaccounts')),
    ].join('\n');
    assert.equal(findCanary(text), undefined);
    assert.match(await registry.metrics(), /pullsecret_share_projections_total\{outcome="created"\} [1-9]/);
    assert.match(await registry.metrics(), /pullsecret_share_denials_total [1-9]/);
    assert.match(await registry.metrics(), /pullsecret_share_removals_total\{reason="revoked"\} [1-9]/);
    // The canary is in the copies (base64, as Secrets hold data), and nowhere else but the source.
    const holders = server
      .listObjects('secrets')
      .filter(
        (s) =>
          findCanary(
            Buffer.from(
              String((s.data as Record<string, string> | undefined)?.['.dockerconfigjson'] ?? ''),
              'base64',
            ).toString(),
          ) !== undefined,
      )
      .map((s) => `${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`);
    assert.deepEqual(holders.sort(), ['clusters-c1/c1-pull-secret', 'labelled/by-label', 'team-a/shared']);
    assert.equal(findCanary(JSON.stringify(server.requests())), undefined);
  });
});
