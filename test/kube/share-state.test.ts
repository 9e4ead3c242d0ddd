// The share controller's view of the cluster (src/kube/share-state.ts) against the Kubernetes test
// server: a namespace event requeues the shares only when the namespace's labels (what selects
// consumers) changed, or the namespace appeared, started terminating or went.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { ShareState, type StateChange } from '../../src/kube/share-state.js';
import { startKubernetesTestServer } from '../servers/kubernetes/server.js';
import { until } from '../support/until.js';

test('a namespace event requeues the shares only when its labels changed or it appeared or went', async () => {
  const server = await startKubernetesTestServer({ namespaces: ['team-a'] });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(server.kubeconfigPath);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const changes: StateChange[] = [];
  const state = new ShareState({ kubeConfig, onChange: (change) => changes.push(change) });
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
