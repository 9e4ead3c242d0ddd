// The share controller's view of the cluster (src/kube/share-state.ts) against the Kubernetes test
// server: a namespace event requeues the shares only when the namespace's labels (what selects
// consumers) changed, or the namespace appeared, started terminating or went; each source kind's
// Secret is told apart by its row of the table (name, type, labels), keeping only its data keys.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { ShareState, type StateChange } from '../../src/kube/share-state.js';
import { SOURCE_KINDS } from '../../src/shares/source-kinds.js';
import { startKubernetesTestServer } from '../servers/kubernetes/server.js';
import { until } from '../support/until.js';

test('a namespace event requeues the shares only when its labels changed or it appeared or went', async () => {
  const server = await startKubernetesTestServer({ namespaces: ['team-a'] });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(server.kubeconfigPath);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const changes: StateChange[] = [];
  const state = new ShareState({
    kubeConfig,
    sources: Object.values(SOURCE_KINDS),
    onChange: (change) => changes.push(change),
  });
  const requeues = () => changes.filter((c) => c.kind === 'namespaces').length;
  /** Reads the namespace, changes it and writes it back (a MODIFIED event). */
  const update = async (
    name: string,
    edit: (meta: { labels?: Record<string, string>; annotations?: Record<string, string> }) => void,
  ) => {
    const ns = await core.readNamespace({ name });
    edit((ns.metadata ??= {}));
    await core.replaceNamespace({ name, body: ns });
  };
  state.start();
  try {
    await until('the share state listed everything', () => state.synced());
    // The last first list's requeue is queued as a microtask.
    await new Promise((resolve) => setImmediate(resolve));
    changes.length = 0;

    // Annotations only, then a new namespace: events arrive in order, so once team-b is known the
    // annotation's event has been handled too.
    await update('team-a', (meta) => (meta.annotations = { note: 'not a label' }));
    server.createNamespace('team-b');
    await until('team-b is known', () => state.namespaces.has('team-b'));
    assert.equal(requeues(), 1, 'only the new namespace requeues the shares');

    await update('team-a', (meta) => (meta.labels = { ...meta.labels, tier: 'gold' }));
    await until('the label is known', () => state.namespaces.get('team-a')?.tier === 'gold');
    assert.equal(requeues(), 2, 'a label change requeues the shares');

    // Deleting a namespace: it is Terminating first (no consumer any more), then gone.
    const release = server.holdNamespaceTermination();
    await core.deleteNamespace({ name: 'team-b' });
    await until('team-b is terminating', () => state.terminating.has('team-b'));
    assert.equal(requeues(), 3, 'a namespace that starts terminating requeues the shares');
    release();
    await until('team-b is gone', () => !state.namespaces.has('team-b'));
    assert.equal(requeues(), 4, 'a namespace that went requeues the shares');
    assert.equal(state.terminating.has('team-b'), false);
  } finally {
    await state.stop();
    await server.close();
  }
});

test("each source kind's Secret is told apart by name, type and labels; copies and look-alikes are none", async () => {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const managed = { 'managed-by': 'hyperfleet', 'cluster-id': 'c1' };
  const server = await startKubernetesTestServer({ namespaces: ['clusters-c1', 'team-a'] });
  const secret = (
    namespace: string,
    name: string,
    type: string,
    labels: Record<string, string>,
    data: Record<string, string>,
  ) => server.seed({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace, labels }, type, data });
  secret('clusters-c1', 'c1-pull-secret', 'kubernetes.io/dockerconfigjson', managed, {
    '.dockerconfigjson': b64('{"auths":{}}'),
  });
  const bundle = { 'entitlement.pem': b64('cert'), 'entitlement-key.pem': b64('key') };
  secret(
    'clusters-c1',
    'etc-pki-entitlement',
    'Opaque',
    { ...managed, 'resource-type': 'entitlement' },
    {
      ...bundle,
      extra: b64('not part of the bundle'),
    },
  );
  // Look-alikes: without the resource-type label, of another type, and a share's copy.
  secret('team-a', 'etc-pki-entitlement', 'Opaque', managed, bundle);
  secret('team-a', 'c1-pull-secret', 'Opaque', managed, { '.dockerconfigjson': b64('{}') });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(server.kubeconfigPath);
  const changes: StateChange[] = [];
  const state = new ShareState({
    kubeConfig,
    sources: Object.values(SOURCE_KINDS),
    onChange: (change) => changes.push(change),
  });
  state.start();
  try {
    await until('the share state listed everything', () => state.synced());
    assert.equal(state.source('pullSecret', 'c1')?.namespace, 'clusters-c1');
    assert.equal(state.source('pullSecret', 'c1')?.type, 'kubernetes.io/dockerconfigjson');
    const entitlement = state.source('entitlement', 'c1');
    assert.equal(entitlement?.namespace, 'clusters-c1');
    assert.equal(entitlement?.type, 'Opaque');
    assert.deepEqual(entitlement?.data, bundle, 'only the bundle keys are kept');
    assert.notEqual(entitlement?.sha256, state.source('pullSecret', 'c1')?.sha256);

    changes.length = 0;
    server.deleteObject('secrets', 'clusters-c1', 'etc-pki-entitlement');
    await until('the entitlement source is gone', () => state.source('entitlement', 'c1') === undefined);
    assert.ok(state.source('pullSecret', 'c1'), 'the pull secret source stays');
    assert.deepEqual(
      changes.filter((c) => c.kind === 'source'),
      [{ kind: 'source', clusterId: 'c1', source: 'entitlement' }],
    );
    // A look-alike is no source, even where the real one is gone.
    secret('clusters-c1', 'etc-pki-entitlement', 'Opaque', managed, bundle);
    const copyLabels = { ...managed, 'resource-type': 'entitlement', 'pullsecret.hyperfleet.io/share': 'x' };
    secret('team-b', 'etc-pki-entitlement', 'Opaque', copyLabels, bundle);
    await until('the copy is known', () => state.copy('team-b', 'etc-pki-entitlement') !== undefined);
    assert.equal(state.source('entitlement', 'c1'), undefined);

    // Labelled, the look-alike becomes the source; unlabelled again, it is one no more.
    const relabel = (labels: Record<string, string>) => {
      const current = server.getObject('secrets', 'clusters-c1', 'etc-pki-entitlement');
      assert.ok(current);
      server.apply({ ...current, metadata: { ...current.metadata, labels } });
    };
    changes.length = 0;
    relabel({ ...managed, 'resource-type': 'entitlement' });
    await until('labelled: a source', () => state.source('entitlement', 'c1') !== undefined);
    relabel(managed);
    await until('unlabelled: no source', () => state.source('entitlement', 'c1') === undefined);
    assert.equal(changes.filter((c) => c.kind === 'source' && c.source === 'entitlement').length, 2);
  } finally {
    await state.stop();
    await server.close();
  }
});
