import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';
import { CANARY_PULL_SECRET, findCanary, VALID_PULL_SECRET } from '../support/fixtures.js';
import { until } from '../support/until.js';

// The informer (items 3 and 4 of issue 15), in-process with the local store and the Kubernetes API
// test server over HTTPS: a no-op apply makes no Kubernetes API call once the watch has listed, and
// a managed Secret that someone else deletes or edits comes back without any broker event.

const OTHER_PULL_SECRET = VALID_PULL_SECRET.replace('test@example.com', 'intruder@example.com');

describe('informer and drift repair (in-process, Kubernetes API)', () => {
  let kube: KubernetesTestServer;
  let stack: AdapterStack;
  let core: CoreV1Api;

  const metric = async (line: RegExp): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    const match = line.exec(text);
    return match === null ? 0 : Number(match[1]);
  };
  const drift = (kind: string) =>
    metric(new RegExp(`^pullsecret_drift_repairs_total\\{kind="${kind}"\\} (\\d+)`, 'm'));
  const relists = (reason: string) =>
    metric(
      new RegExp(
        `^pullsecret_kubernetes_relists_total\\{resource="secrets",reason="${reason}"\\} (\\d+)`,
        'm',
      ),
    );
  const secretOf = (id: string) =>
    kube.getObject('secrets', `clusters-${id}`, `${id}-pull-secret`) as
      (V1Secret & { metadata: { name: string } }) | undefined;
  const payloadOf = (s: V1Secret | undefined) =>
    Buffer.from(s?.data?.['.dockerconfigjson'] ?? '', 'base64').toString();

  /** A cluster reconciled once, its Secret written and seen by the informer. */
  async function provisioned(): Promise<string> {
    const cluster = await stack.seedCluster();
    kube.createNamespace(`clusters-${cluster.id}`);
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    return cluster.id;
  }

  /** Someone else's update of the Secret, through the API. */
  async function edit(id: string, change: (s: V1Secret) => V1Secret): Promise<void> {
    const current = await core.readNamespacedSecret({
      namespace: `clusters-${id}`,
      name: `${id}-pull-secret`,
    });
    await core.replaceNamespacedSecret({
      namespace: `clusters-${id}`,
      name: `${id}-pull-secret`,
      body: change(current),
    });
  }

  /** Waits until the Secret holds the cluster's pull secret again, with our type and labels. */
  async function restored(id: string): Promise<V1Secret> {
    return until(`restoration of ${id}`, () => {
      const s = secretOf(id);
      return s !== undefined &&
        s.type === 'kubernetes.io/dockerconfigjson' &&
        payloadOf(s) === VALID_PULL_SECRET &&
        s.metadata?.labels?.['cluster-id'] === id &&
        s.metadata.labels['managed-by'] === 'hyperfleet'
        ? s
        : undefined;
    });
  }

  before(async () => {
    kube = await startKubernetesTestServer({ rbac: ['overlays/in-process'] });
    stack = await startAdapterStack({
      kubernetes: {
        target: 'api',
        kubeconfig: await kube.serviceAccountKubeconfig('hyperfleet-system', 'pullsecret-adapter'),
      },
    });
    const kc = new KubeConfig();
    kc.loadFromFile(kube.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
  });
  after(async () => {
    await stack?.stop();
    await kube?.close();
  });

  test('a no-op reconcile makes no Kubernetes API call once the watch has listed', async () => {
    const id = await provisioned();
    await until(
      'the Secret in the cache',
      async () => (await metric(/^pullsecret_kubernetes_cache_objects\{resource="secrets"\} (\d+)/m)) >= 1,
    );
    kube.resetCalls();
    await stack.publish({ id, generation: 1 });
    await stack.waitForStatus(id, (s) => conditionOf(s, 'Applied') === 'True/SecretUpToDate');
    assert.deepEqual(
      kube.requests().filter((r) => r.method !== 'WATCH'),
      [],
    );
  });

  test('a start takes events only once the managed Secrets are listed: its first no-op makes no Kubernetes call', async () => {
    const id = await provisioned();
    // The new replica's list of Secrets (its first secrets GET) answers late.
    kube.injectFault({ method: 'GET', resource: 'secrets', delayMs: 500 });
    const replica = await stack.startReplica();
    try {
      kube.resetCalls();
      const sent = Date.now();
      await stack.publish({ id, generation: 1 }, replica.adapter);
      await stack.waitForStatus(
        id,
        (s) => Date.parse(s.last_report_time) >= sent && conditionOf(s, 'Applied') === 'True/SecretUpToDate',
      );
      assert.deepEqual(
        kube.requests().filter((r) => r.method !== 'WATCH'),
        [],
      );
      assert.ok(replica.logs.some((l) => l.includes('Kubernetes Secrets listed')));
    } finally {
      await replica.adapter.stop();
    }
  });

  test('a list that does not answer within informer.listWaitSeconds delays the start no longer: events are taken, applies read with GET', async () => {
    const id = await provisioned();
    kube.injectFault({ method: 'GET', resource: 'secrets', delayMs: 3_000 });
    const replica = await stack.startReplica((config) => ({
      ...config,
      informer: { ...config.informer, listWaitSeconds: 1 },
    }));
    try {
      assert.ok(
        replica.logs.some(
          (l) => l.includes('"level":"warn"') && l.includes('Kubernetes Secrets not listed within 1 s'),
        ),
      );
      kube.resetCalls();
      const sent = Date.now();
      await stack.publish({ id, generation: 1 }, replica.adapter);
      await stack.waitForStatus(
        id,
        (s) => Date.parse(s.last_report_time) >= sent && conditionOf(s, 'Applied') === 'True/SecretUpToDate',
      );
      assert.ok(kube.requests().some((r) => r.method === 'GET' && r.name === `${id}-pull-secret`));
    } finally {
      await replica.adapter.stop();
    }
  });

  test('a deleted managed Secret is restored without a broker event, counted and logged without its data', async () => {
    const id = await provisioned();
    const before = await drift('deleted');
    const events = await metric(/^pullsecret_events_total\{result="applied"\} (\d+)/m);
    assert.ok(kube.deleteObject('secrets', `clusters-${id}`, `${id}-pull-secret`));
    await restored(id);
    assert.equal(await drift('deleted'), before + 1);
    const line = stack.logs.find((l) => l.includes('"drift-repair"') && l.includes(id));
    assert.ok(line, 'the repair is logged with the cluster id');
    assert.match(line, /"kind":"deleted"/);
    assert.ok(!stack.logs.some((l) => l.includes('dGVzdDp0ZXN0')), 'no payload in the logs');
    // The repair is a reconcile like an event's, reported the same way.
    assert.equal(await metric(/^pullsecret_events_total\{result="applied"\} (\d+)/m), events + 1);
  });

  test("edited data, type and labels are restored; others' keys, labels and annotations are kept and are not drift", async () => {
    const id = await provisioned();
    // Someone else adds a key, a label and an annotation: not drift, nothing written back.
    const counts = await Promise.all(['deleted', 'data', 'type', 'labels'].map(drift));
    kube.resetCalls();
    await edit(id, (s) => ({
      ...s,
      metadata: {
        ...s.metadata,
        labels: { ...s.metadata?.labels, team: 'infra' },
        annotations: { ...s.metadata?.annotations, note: 'kept' },
      },
      data: { ...s.data, extra: 'eA==' },
    }));
    await sleep(500);
    assert.deepEqual(await Promise.all(['deleted', 'data', 'type', 'labels'].map(drift)), counts);
    assert.equal(kube.writes('secrets'), 1, 'only the foreign edit itself');

    await edit(id, (s) => ({
      ...s,
      data: { ...s.data, '.dockerconfigjson': Buffer.from(OTHER_PULL_SECRET).toString('base64') },
    }));
    const afterData = await restored(id);
    assert.equal(afterData.metadata?.labels?.team, 'infra');
    assert.equal(afterData.metadata?.annotations?.note, 'kept');
    assert.equal(afterData.data?.extra, 'eA==');
    assert.equal(await drift('data'), (counts[1] ?? 0) + 1);

    await edit(id, (s) => ({
      ...s,
      metadata: { ...s.metadata, labels: { ...s.metadata?.labels, 'cluster-id': 'someone-else' } },
    }));
    await restored(id);
    assert.equal(await drift('labels'), (counts[3] ?? 0) + 1);

    // A type cannot change in place: someone deletes and recreates the Secret as Opaque.
    const ns = `clusters-${id}`;
    const old = secretOf(id);
    kube.deleteObject('secrets', ns, `${id}-pull-secret`);
    kube.seed({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: `${id}-pull-secret`,
        namespace: ns,
        labels: { ...old?.metadata.labels, team: 'infra' },
      },
      type: 'Opaque',
      data: { ...old?.data },
    });
    const afterType = await restored(id);
    assert.equal(afterType.metadata?.labels?.team, 'infra');
    assert.ok((await drift('type')) + (await drift('deleted')) > (counts[2] ?? 0) + (counts[0] ?? 0));
  });

  test('a repair of a canary pull secret leaks nothing to logs or metrics', async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: CANARY_PULL_SECRET } });
    kube.createNamespace(`clusters-${cluster.id}`);
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    kube.deleteObject('secrets', `clusters-${cluster.id}`, `${cluster.id}-pull-secret`);
    await until('restoration', () => payloadOf(secretOf(cluster.id)) === CANARY_PULL_SECRET);
    await edit(cluster.id, (s) => ({
      ...s,
      data: { ...s.data, '.dockerconfigjson': Buffer.from(OTHER_PULL_SECRET).toString('base64') },
    }));
    await until('restoration after an edit', () => payloadOf(secretOf(cluster.id)) === CANARY_PULL_SECRET);
    assert.equal(findCanary(stack.logs.join('\n')), undefined);
    assert.equal(
      findCanary(await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text()),
      undefined,
    );
    assert.equal(findCanary(JSON.stringify(stack.api.listStatuses(cluster.id))), undefined);
  });

  test('the watch survives 410 Gone: a deletion missed meanwhile is found by the new list', async () => {
    const id = await provisioned();
    const expired = await relists('expired');
    // The watch ends, the Secret goes while no watch is open, and the history is compacted.
    kube.endWatches();
    kube.deleteObject('secrets', `clusters-${id}`, `${id}-pull-secret`);
    kube.compact();
    await restored(id);
    assert.ok((await relists('expired')) > expired);
  });

  test('the watch survives a restart of the API server', async () => {
    const id = await provisioned();
    const errors = await relists('error');
    await kube.restart({
      downMs: 300,
      whileDown: () => kube.deleteObject('secrets', `clusters-${id}`, `${id}-pull-secret`),
    });
    await restored(id);
    assert.ok((await relists('error')) > errors);
    // And it is live again: the next deletion is seen by the watch.
    kube.deleteObject('secrets', `clusters-${id}`, `${id}-pull-secret`);
    await restored(id);
  });

  test('managed-by taken off is drift kind labels, not deleted (the watch sends the previous, still labelled object)', async () => {
    const id = await provisioned();
    const [deleted, labels] = await Promise.all(['deleted', 'labels'].map(drift));
    await edit(id, (s) => ({ ...s, metadata: { ...s.metadata, labels: { 'cluster-id': id } } }));
    await until('the label drift is counted', async () => (await drift('labels')) === (labels ?? 0) + 1);
    assert.equal(await drift('deleted'), deleted);
    // The repair reconcile refuses to adopt a Secret that is not ours any more.
    await until('the refusal is reported', () =>
      stack.logs.some((l) => l.includes(id) && l.includes('SECRET_UNMANAGED')),
    );
  });

  test('a Secret without managed-by=hyperfleet is never touched', async () => {
    const cluster = await stack.seedCluster();
    const ns = `clusters-${cluster.id}`;
    const name = `${cluster.id}-pull-secret`;
    kube.seed({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: ns, labels: { 'cluster-id': cluster.id } },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(OTHER_PULL_SECRET).toString('base64') },
    });
    kube.resetCalls();
    await edit(cluster.id, (s) => ({
      ...s,
      data: { '.dockerconfigjson': Buffer.from(VALID_PULL_SECRET).toString('base64') },
    }));
    kube.deleteObject('secrets', ns, name);
    await sleep(500);
    // Only this test's own read and update: the adapter neither saw nor touched it.
    assert.deepEqual(
      kube
        .requests()
        .filter((r) => r.method !== 'WATCH')
        .map((r) => `${r.method} ${r.name ?? ''}`),
      [`GET ${name}`, `PUT ${name}`],
    );
    assert.equal(secretOf(cluster.id), undefined);
  });
});
