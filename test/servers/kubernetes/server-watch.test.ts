import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  ApiException,
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  makeInformer,
  Watch,
  type V1Job,
} from '@kubernetes/client-node';
import { startKubernetesTestServer, type KubernetesTestServer } from './server.js';

interface Seen {
  type: string;
  name: string;
  rv: string;
}

/** Starts a watch and collects its events until `stop` is called. */
async function collect(
  kc: KubeConfig,
  path: string,
  query: Record<string, string> = {},
): Promise<{ events: Seen[]; stop: () => void; until: (n: number) => Promise<void> }> {
  const events: Seen[] = [];
  const controller = await new Watch(kc).watch(
    path,
    query,
    (type: string, obj: { metadata?: { name?: string; resourceVersion?: string } }) => {
      events.push({ type, name: obj.metadata?.name ?? '', rv: obj.metadata?.resourceVersion ?? '' });
    },
    () => undefined,
  );
  const until = async (n: number) => {
    for (let i = 0; i < 200 && events.length < n; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(events.length >= n, `expected ${n} events, got ${JSON.stringify(events)}`);
  };
  return { events, stop: () => controller.abort(), until };
}

function job(name: string, restartPolicy = 'Never'): V1Job {
  return {
    metadata: { name },
    spec: {
      template: {
        spec: {
          restartPolicy,
          containers: [{ name: 'run', image: 'registry.example/pull-secret:1.0', args: ['run-job'] }],
        },
      },
    },
  };
}

describe('Kubernetes test server: watches and Jobs', () => {
  let server: KubernetesTestServer;
  let kc: KubeConfig;
  let core: CoreV1Api;
  let batch: BatchV1Api;

  before(async () => {
    server = await startKubernetesTestServer({ namespaces: ['w', 'hyperfleet-system'] });
    kc = new KubeConfig();
    kc.loadFromFile(server.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    batch = kc.makeApiClient(BatchV1Api);
  });
  after(() => server.close());

  it('streams ADDED, MODIFIED and DELETED with resourceVersions', async () => {
    const w = await collect(kc, '/api/v1/namespaces/w/secrets', { labelSelector: 'watched=yes' });
    const created = await core.createNamespacedSecret({
      namespace: 'w',
      body: { metadata: { name: 'a', labels: { watched: 'yes' } }, data: {} },
    });
    await core.createNamespacedSecret({ namespace: 'w', body: { metadata: { name: 'ignored' }, data: {} } });
    await core.replaceNamespacedSecret({
      namespace: 'w',
      name: 'a',
      body: { ...created, data: { k: 'YQ==' } },
    });
    // Leaving the selection is reported as DELETED, as the API server does.
    const current = await core.readNamespacedSecret({ namespace: 'w', name: 'a' });
    await core.replaceNamespacedSecret({
      namespace: 'w',
      name: 'a',
      body: { ...current, metadata: { ...current.metadata, labels: { watched: 'no' } } },
    });
    await w.until(3);
    w.stop();
    assert.deepEqual(
      w.events.map((e) => `${e.type} ${e.name}`),
      ['ADDED a', 'MODIFIED a', 'DELETED a'],
    );
    const rvs = w.events.map((e) => Number(e.rv));
    assert.deepEqual(
      [...rvs].sort((x, y) => x - y),
      rvs,
    );
    assert.equal(server.calls('WATCH', 'secrets'), 1);
  });

  it('starts with the current objects, or resumes after a resourceVersion', async () => {
    const list = await core.listNamespacedSecret({ namespace: 'w' });
    const initial = await collect(kc, '/api/v1/namespaces/w/secrets');
    await initial.until(2);
    initial.stop();
    assert.deepEqual(
      initial.events.map((e) => `${e.type} ${e.name}`),
      ['ADDED a', 'ADDED ignored'],
    );

    const resumed = await collect(kc, '/api/v1/namespaces/w/secrets', {
      resourceVersion: list.metadata?.resourceVersion ?? '',
    });
    server.deleteObject('secrets', 'w', 'ignored');
    await resumed.until(1);
    resumed.stop();
    assert.deepEqual(
      resumed.events.map((e) => `${e.type} ${e.name}`),
      ['DELETED ignored'],
    );
  });

  it('creates Jobs with defaults and rejects bad pod policies', async () => {
    const created = await batch.createNamespacedJob({
      namespace: 'hyperfleet-system',
      body: job('pullsecret-c1-gen1'),
    });
    assert.equal(created.metadata?.generation, 1);
    assert.equal(created.spec?.backoffLimit, 6);
    assert.equal(created.spec?.template.metadata?.labels?.['job-name'], 'pullsecret-c1-gen1');
    assert.equal(
      created.spec?.selector?.matchLabels?.['batch.kubernetes.io/controller-uid'],
      created.metadata?.uid,
    );
    const rejected = async (body: V1Job) => {
      try {
        await batch.createNamespacedJob({ namespace: 'hyperfleet-system', body });
      } catch (err) {
        assert.ok(err instanceof ApiException);
        return JSON.parse(err.body as string) as { code: number; details: { causes: { field: string }[] } };
      }
      assert.fail('expected a 422');
    };
    const always = await rejected(job('j-always', 'Always'));
    assert.deepEqual(
      [always.code, always.details.causes.map((c) => c.field)],
      [422, ['spec.template.spec.restartPolicy']],
    );
    const long = await rejected(job(`j${'x'.repeat(63)}`));
    // The generated job-name labels are too long as well, as on a real API server.
    assert.deepEqual(
      [...new Set(long.details.causes.map((c) => c.field))],
      ['metadata.name', 'metadata.labels', 'spec.template.metadata.labels'],
    );
    const noContainers = await rejected({
      metadata: { name: 'j-empty' },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [] } } },
    });
    assert.deepEqual(
      noContainers.details.causes.map((c) => c.field),
      ['spec.template.spec.containers'],
    );
  });

  it('updates Job status through the helper, with a watch event', async () => {
    const w = await collect(kc, '/apis/batch/v1/namespaces/hyperfleet-system/jobs', {
      fieldSelector: 'metadata.name=pullsecret-c1-gen1',
    });
    await w.until(1);
    const updated = server.setJobStatus('hyperfleet-system', 'pullsecret-c1-gen1', { succeeded: 1 });
    assert.equal(updated.metadata.generation, 1, 'status changes do not bump generation');
    await w.until(2);
    w.stop();
    assert.deepEqual(
      w.events.map((e) => e.type),
      ['ADDED', 'MODIFIED'],
    );
    const read = await batch.readNamespacedJob({
      namespace: 'hyperfleet-system',
      name: 'pullsecret-c1-gen1',
    });
    assert.equal(read.status?.succeeded, 1);
    await batch.deleteNamespacedJob({
      namespace: 'hyperfleet-system',
      name: 'pullsecret-c1-gen1',
      propagationPolicy: 'Foreground',
    });
    assert.equal(server.getObject('jobs', 'hyperfleet-system', 'pullsecret-c1-gen1'), undefined);
  });

  it('feeds a client-node informer (list, then watch from the list resourceVersion)', async () => {
    const informer = makeInformer(kc, '/apis/batch/v1/namespaces/w/jobs', () =>
      batch.listNamespacedJob({ namespace: 'w' }),
    );
    const seen: string[] = [];
    informer.on('add', (j: V1Job) => seen.push(`add ${j.metadata?.name ?? ''}`));
    informer.on('update', (j: V1Job) =>
      seen.push(`update ${j.metadata?.name ?? ''} ${j.status?.failed ?? 0}`),
    );
    await batch.createNamespacedJob({ namespace: 'w', body: job('listed') });
    await informer.start();
    await batch.createNamespacedJob({ namespace: 'w', body: job('watched') });
    server.setJobStatus('w', 'watched', { failed: 1 });
    for (let i = 0; i < 200 && seen.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    await informer.stop();
    assert.deepEqual(seen, ['add listed', 'add watched', 'update watched 1']);
    await batch.deleteNamespacedJob({ namespace: 'w', name: 'listed' });
    await batch.deleteNamespacedJob({ namespace: 'w', name: 'watched' });
  });

  it('sends an object leaving the selection as DELETED with its previous labels and the new resourceVersion (cache_watcher.go)', async () => {
    const objects: { type: string; labels?: Record<string, string>; rv?: string }[] = [];
    const controller = await new Watch(kc).watch(
      '/api/v1/namespaces/w/secrets',
      { labelSelector: 'managed-by=hyperfleet' },
      (type: string, obj: { metadata?: { labels?: Record<string, string>; resourceVersion?: string } }) =>
        void objects.push({ type, labels: obj.metadata?.labels, rv: obj.metadata?.resourceVersion }),
      () => undefined,
    );
    await core.createNamespacedSecret({
      namespace: 'w',
      body: { metadata: { name: 'released', labels: { 'managed-by': 'hyperfleet' } }, data: {} },
    });
    const current = await core.readNamespacedSecret({ namespace: 'w', name: 'released' });
    const updated = await core.replaceNamespacedSecret({
      namespace: 'w',
      name: 'released',
      body: { ...current, metadata: { ...current.metadata, labels: {} } },
    });
    for (let i = 0; i < 200 && objects.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    assert.deepEqual(objects[1], {
      type: 'DELETED',
      labels: { 'managed-by': 'hyperfleet' },
      rv: updated.metadata?.resourceVersion,
    });
  });

  it('sends BOOKMARK events only to watches that allow them (api-concepts, watch bookmarks)', async () => {
    const from = (await core.listNamespacedSecret({ namespace: 'w' })).metadata?.resourceVersion ?? '';
    const allowed = await collect(kc, '/api/v1/namespaces/w/secrets', {
      allowWatchBookmarks: 'true',
      resourceVersion: from,
    });
    const plain = await collect(kc, '/api/v1/namespaces/w/secrets', { resourceVersion: from });
    await core.createNamespacedSecret({
      namespace: 'hyperfleet-system',
      body: { metadata: { name: 'elsewhere' }, data: {} },
    });
    server.sendBookmarks();
    for (let i = 0; i < 200 && allowed.events.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const bookmark = allowed.events.find((e) => e.type === 'BOOKMARK');
    assert.ok(bookmark, JSON.stringify(allowed.events));
    assert.equal(
      bookmark.rv,
      server.getObject('secrets', 'hyperfleet-system', 'elsewhere')?.metadata.resourceVersion,
    );
    allowed.stop();
    plain.stop();
    assert.deepEqual(plain.events, []);
  });

  it('keeps a deleted namespace Terminating, refusing creates in it with 403 (NamespaceLifecycle admission)', async () => {
    server.createNamespace('doomed');
    const release = server.holdNamespaceTermination();
    const deleted = await core.deleteNamespace({ name: 'doomed' });
    assert.equal((deleted as { status?: { phase?: string } }).status?.phase, 'Terminating');
    assert.equal(
      (server.getObject('namespaces', undefined, 'doomed')?.status as { phase?: string }).phase,
      'Terminating',
    );
    const err = await core
      .createNamespacedSecret({ namespace: 'doomed', body: { metadata: { name: 'late' }, data: {} } })
      .catch((e: unknown) => e);
    assert.ok(err instanceof ApiException);
    assert.deepEqual(JSON.parse(err.body as string), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'secrets "late" is forbidden: unable to create new content in namespace doomed because it is being terminated',
      reason: 'Forbidden',
      details: {
        name: 'late',
        kind: 'secrets',
        causes: [
          {
            reason: 'NamespaceTerminating',
            message: 'namespace doomed is being terminated',
            field: 'metadata.namespace',
          },
        ],
      },
      code: 403,
    });
    release();
    assert.equal(server.getObject('namespaces', undefined, 'doomed'), undefined);
    await assert.rejects(
      core.createNamespacedSecret({ namespace: 'doomed', body: { metadata: { name: 'later' }, data: {} } }),
      (e: unknown) => e instanceof ApiException && e.code === 404,
    );
  });

  it(
    'works with kubectl get, create and apply',
    { skip: existsSync('/usr/bin/kubectl') ? false : 'kubectl not installed' },
    async () => {
      const home = join(server.dir, 'home');
      await mkdir(home, { recursive: true });
      const kubectl = async (...args: string[]) =>
        (
          await promisify(execFile)('kubectl', ['--kubeconfig', server.kubeconfigPath, ...args], {
            env: { ...process.env, HOME: home },
            timeout: 30_000,
          })
        ).stdout;
      const manifest = join(server.dir, 'job.yaml');
      await writeFile(
        manifest,
        [
          'apiVersion: batch/v1',
          'kind: Job',
          'metadata: {name: kubectl-job, namespace: w}',
          'spec:',
          '  template:',
          '    spec:',
          '      restartPolicy: Never',
          '      containers: [{name: c, image: busybox:1.36}]',
          '',
        ].join('\n'),
      );
      assert.match(await kubectl('create', '-f', manifest), /job.batch\/kubectl-job created/);
      assert.match(await kubectl('apply', '-f', manifest), /job.batch\/kubectl-job (configured|unchanged)/);
      assert.match(await kubectl('get', 'secrets', '-n', 'w'), /^NAME\s+TYPE\s+DATA\s+AGE\n/);
      assert.match(
        await kubectl('get', 'jobs', '-n', 'w', '-o', 'jsonpath={.items[*].metadata.name}'),
        /^kubectl-job$/,
      );
    },
  );
});
