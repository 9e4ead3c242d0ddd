import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import {
  ApiException,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Secret,
} from '@kubernetes/client-node';
import { startKubernetesTestServer, type KubernetesTestServer } from './server.js';

const DOCKER = Buffer.from('{"auths":{"quay.io":{"auth":"eDp5"}}}').toString('base64');

function secret(name: string, extra: Partial<V1Secret> = {}): V1Secret {
  return {
    metadata: { name, labels: { app: 'a' } },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': DOCKER },
    ...extra,
  };
}

/** The Status body of a failed client call. */
async function status(
  call: Promise<unknown>,
): Promise<{ code: number; reason: string; message: string; details?: { causes?: { field: string }[] } }> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof ApiException, `expected ApiException, got ${String(err)}`);
    return JSON.parse(err.body as string) as never;
  }
  assert.fail('expected the call to fail');
}

describe('Kubernetes test server: core API', () => {
  let server: KubernetesTestServer;
  let core: CoreV1Api;

  before(async () => {
    server = await startKubernetesTestServer({ namespaces: ['ns1'] });
    const kc = new KubeConfig();
    kc.loadFromFile(server.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
  });
  after(() => server.close());

  it('answers 401 with a Status without the bearer token', async () => {
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(`${server.url}/api/v1/namespaces`, { ca: server.caPem }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(`${res.statusCode} ${text}`));
      });
      req.on('error', reject);
      req.end();
    });
    assert.match(body, /^401 \{"kind":"Status","apiVersion":"v1".*"reason":"Unauthorized","code":401/);
  });

  it('serves namespaces', async () => {
    await core.createNamespace({ body: { metadata: { name: 'ns2' } } });
    const ns = await core.readNamespace({ name: 'ns2' });
    assert.equal(ns.status?.phase, 'Active');
    const names = (await core.listNamespace()).items.map((n) => n.metadata?.name);
    assert.deepEqual(names, ['default', 'ns1', 'ns2']);
    assert.equal(
      (await status(core.createNamespace({ body: { metadata: { name: 'ns2' } } }))).reason,
      'AlreadyExists',
    );
  });

  it('creates, reads and lists Secrets with server metadata', async () => {
    const created = await core.createNamespacedSecret({ namespace: 'ns1', body: secret('s1') });
    assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.match(created.metadata?.resourceVersion ?? '', /^\d+$/);
    assert.ok(created.metadata?.creationTimestamp instanceof Date);
    assert.equal(created.metadata?.generation, undefined);
    const read = await core.readNamespacedSecret({ namespace: 'ns1', name: 's1' });
    assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);
    const conflict = await status(core.createNamespacedSecret({ namespace: 'ns1', body: secret('s1') }));
    assert.deepEqual(
      [conflict.code, conflict.reason, conflict.message],
      [409, 'AlreadyExists', 'secrets "s1" already exists'],
    );
    const missing = await status(core.readNamespacedSecret({ namespace: 'ns1', name: 'nope' }));
    assert.deepEqual(
      [missing.code, missing.reason, missing.message],
      [404, 'NotFound', 'secrets "nope" not found'],
    );
  });

  it('refuses objects in a missing namespace', async () => {
    const s = await status(core.createNamespacedSecret({ namespace: 'ghost', body: secret('s1') }));
    assert.deepEqual([s.code, s.message], [404, 'namespaces "ghost" not found']);
  });

  it('filters lists by label selector', async () => {
    await core.createNamespacedSecret({
      namespace: 'ns1',
      body: secret('s2', { metadata: { name: 's2', labels: { app: 'b', tier: 'x' } } }),
    });
    await core.createNamespacedSecret({ namespace: 'ns1', body: secret('s3', { metadata: { name: 's3' } }) });
    const names = async (labelSelector: string) =>
      (await core.listNamespacedSecret({ namespace: 'ns1', labelSelector })).items.map(
        (s) => s.metadata?.name,
      );
    assert.deepEqual(await names('app=a'), ['s1']);
    assert.deepEqual(await names('app!=a'), ['s2', 's3']);
    assert.deepEqual(await names('app in (a, b)'), ['s1', 's2']);
    assert.deepEqual(await names('app notin (a)'), ['s2', 's3']);
    assert.deepEqual(await names('tier'), ['s2']);
    assert.deepEqual(await names('!app'), ['s3']);
    assert.deepEqual(await names('app in (a,b),tier=x'), ['s2']);
    assert.equal(
      (await status(core.listNamespacedSecret({ namespace: 'ns1', labelSelector: 'app in a' }))).code,
      400,
    );
  });

  it('pages lists with limit and continue', async () => {
    const first = await core.listNamespacedSecret({ namespace: 'ns1', limit: 2 });
    assert.equal(first.items.length, 2);
    assert.ok(first.metadata?._continue);
    const rest = await core.listNamespacedSecret({
      namespace: 'ns1',
      limit: 2,
      _continue: first.metadata._continue,
    });
    assert.deepEqual(
      rest.items.map((s) => s.metadata?.name),
      ['s3'],
    );
  });

  it('validates bodies like the API server', async () => {
    const invalid = async (body: V1Secret) => status(core.createNamespacedSecret({ namespace: 'ns1', body }));
    const fields = (s: Awaited<ReturnType<typeof status>>) => s.details?.causes?.map((c) => c.field);
    let s = await invalid(secret('Bad_Name'));
    assert.deepEqual([s.code, s.reason, fields(s)], [422, 'Invalid', ['metadata.name']]);
    s = await invalid(secret('x'.repeat(254)));
    assert.deepEqual(fields(s), ['metadata.name']);
    s = await invalid(secret('ok', { metadata: { name: 'ok', labels: { app: 'bad value!' } } }));
    assert.deepEqual(fields(s), ['metadata.labels']);
    s = await invalid(secret('ok', { data: {} }));
    assert.deepEqual(fields(s), ['data[.dockerconfigjson]']);
    s = await invalid(
      secret('ok', { data: { '.dockerconfigjson': Buffer.from('not json').toString('base64') } }),
    );
    assert.deepEqual(fields(s), ['data[.dockerconfigjson]']);
    assert.ok(!JSON.stringify(s).includes('not json'), 'the Status must not echo Secret contents');
    s = await invalid(secret('ok', { type: 'Opaque', data: { 'bad/key': 'YQ==' } }));
    assert.deepEqual(fields(s), ['data[bad/key]']);
    s = await invalid(
      secret('ok', { type: 'Opaque', data: { big: Buffer.alloc(1024 * 1024 + 1).toString('base64') } }),
    );
    assert.deepEqual(fields(s), ['data']);
    s = await invalid(secret('ok', { type: 'Opaque', data: { k: '***' } }));
    assert.equal(s.code, 400);
  });

  it('replaces with optimistic concurrency', async () => {
    const read = await core.readNamespacedSecret({ namespace: 'ns1', name: 's1' });
    const same = await core.replaceNamespacedSecret({ namespace: 'ns1', name: 's1', body: read });
    assert.equal(
      same.metadata?.resourceVersion,
      read.metadata?.resourceVersion,
      'a no-op PUT keeps the resourceVersion',
    );
    const changed = await core.replaceNamespacedSecret({
      namespace: 'ns1',
      name: 's1',
      body: { ...read, data: { ...read.data, extra: 'YQ==' } },
    });
    assert.ok(Number(changed.metadata?.resourceVersion) > Number(read.metadata?.resourceVersion));
    const stale = await status(core.replaceNamespacedSecret({ namespace: 'ns1', name: 's1', body: read }));
    assert.deepEqual([stale.code, stale.reason], [409, 'Conflict']);
    assert.match(
      stale.message,
      /the object has been modified; please apply your changes to the latest version and try again/,
    );
    const immutable = await status(
      core.replaceNamespacedSecret({ namespace: 'ns1', name: 's1', body: { ...changed, type: 'Opaque' } }),
    );
    assert.deepEqual([immutable.code, immutable.details?.causes?.[0]?.field], [422, 'type']);
    assert.equal(
      (
        await status(
          core.replaceNamespacedSecret({ namespace: 'ns1', name: 'absent', body: secret('absent') }),
        )
      ).code,
      404,
    );
  });

  it('patches with JSON patch, merge patch and strategic merge patch', async () => {
    await core.patchNamespacedSecret({
      namespace: 'ns1',
      name: 's1',
      body: [{ op: 'add', path: '/metadata/labels/json', value: 'patch' }],
    });
    await core.patchNamespacedSecret(
      { namespace: 'ns1', name: 's1', body: { metadata: { labels: { merge: 'patch' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await core.patchNamespacedSecret(
      {
        namespace: 'ns1',
        name: 's1',
        body: { metadata: { annotations: { smp: 'yes' } }, data: { extra: null } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    const s = server.getObject('secrets', 'ns1', 's1');
    assert.deepEqual(s?.metadata.labels, { app: 'a', json: 'patch', merge: 'patch' });
    assert.deepEqual(s?.metadata.annotations, { smp: 'yes' });
    assert.deepEqual(Object.keys(s?.data as object), ['.dockerconfigjson']);
    const stale = await status(
      core.patchNamespacedSecret(
        { namespace: 'ns1', name: 's1', body: { metadata: { resourceVersion: '1' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    assert.equal(stale.code, 409);
  });

  it('deletes with propagationPolicy and preconditions', async () => {
    const s3 = await core.readNamespacedSecret({ namespace: 'ns1', name: 's3' });
    const pre = await status(
      core.deleteNamespacedSecret({
        namespace: 'ns1',
        name: 's3',
        body: { preconditions: { uid: 'other' } },
      }),
    );
    assert.equal(pre.code, 409);
    const done = await core.deleteNamespacedSecret({
      namespace: 'ns1',
      name: 's3',
      propagationPolicy: 'Background',
      body: { preconditions: { uid: s3.metadata?.uid } },
    });
    assert.equal(done.status, 'Success');
    assert.equal((await status(core.deleteNamespacedSecret({ namespace: 'ns1', name: 's3' }))).code, 404);
    assert.equal(
      (
        await status(
          core.deleteNamespacedSecret({ namespace: 'ns1', name: 's2', propagationPolicy: 'Sometimes' }),
        )
      ).code,
      400,
    );
  });

  it('injects faults and counts calls', async () => {
    server.resetCalls();
    server.injectFault({ method: 'GET', resource: 'secrets', status: 503, times: 2 });
    assert.equal(
      (await status(core.readNamespacedSecret({ namespace: 'ns1', name: 's1' }))).reason,
      'ServiceUnavailable',
    );
    assert.equal((await status(core.readNamespacedSecret({ namespace: 'ns1', name: 's1' }))).code, 503);
    await core.readNamespacedSecret({ namespace: 'ns1', name: 's1' });
    server.injectFault({ method: 'PUT', resource: 'secrets', status: 500 });
    const read = await core.readNamespacedSecret({ namespace: 'ns1', name: 's1' });
    assert.equal(
      (await status(core.replaceNamespacedSecret({ namespace: 'ns1', name: 's1', body: read }))).reason,
      'InternalError',
    );
    server.injectFault({ method: 'GET', resource: 'secrets', delayMs: 100 });
    const started = Date.now();
    await core.readNamespacedSecret({ namespace: 'ns1', name: 's1' });
    assert.ok(Date.now() - started >= 90);
    assert.equal(server.calls('GET', 'secrets'), 5);
    assert.equal(server.calls('PUT', 'secrets'), 1);
    assert.equal(server.writes(), 1);
    assert.deepEqual(
      server.requests().map((r) => r.status),
      [503, 503, 200, 200, 500, 200],
    );
  });

  it('gives tests direct access to state', () => {
    const seeded = server.seed({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'seeded', namespace: 'fresh' },
      type: 'Opaque',
      data: {},
    });
    assert.ok(seeded.metadata.uid);
    assert.ok(server.getObject('namespaces', undefined, 'fresh'));
    assert.equal(server.listObjects('secrets', 'fresh').length, 1);
    assert.equal(server.deleteObject('secrets', 'fresh', 'seeded'), true);
    assert.equal(server.deleteObject('secrets', 'fresh', 'seeded'), false);
  });
});
