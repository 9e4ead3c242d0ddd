import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { Secret } from 'kubernetes-models/v1';
import { parse } from 'yaml';
import { describeError, PullSecretError } from '../../src/errors/index.js';
import { ManifestDirectoryTarget } from '../../src/kube/manifest-directory.js';
import {
  ANNOTATIONS,
  buildPullSecretManifest,
  DOCKERCONFIGJSON_KEY,
} from '../../src/kube/pull-secret-manifest.js';
import { createKubernetesSecretWriter, type KubernetesSecretWriter } from '../../src/kube/secret-writer.js';
import type { TargetLogger } from '../../src/kube/target.js';
import { CANARY_PULL_SECRET } from '../support/fixtures.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';

const V1 = Buffer.from('{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz","email":"a@example.com"}}}');
const V2 = Buffer.from('{"auths":{"quay.io":{"auth":"bmV3dXNlcjpuZXdwYXNz"}}}');
const FAST_RETRY = { maxAttempts: 4, baseDelayMs: 5, maxDelayMs: 20 };

/** Collects log calls, to assert what they contain. */
function captureLogger(): TargetLogger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    warn: (fields, message) => void lines.push(JSON.stringify({ level: 'warn', message, ...fields })),
    debug: (fields, message) => void lines.push(JSON.stringify({ level: 'debug', message, ...fields })),
  };
}

function isCode(code: string) {
  return (err: unknown) => err instanceof PullSecretError && err.code === code;
}

describe('Kubernetes secret writer against the test API server', () => {
  let server: KubernetesTestServer;
  let writer: KubernetesSecretWriter;
  let core: CoreV1Api;
  const logger = captureLogger();
  let ids = 0;

  /** A cluster id with its namespace created, so tests do not share objects. */
  function cluster(withNamespace = true): {
    id: string;
    ns: string;
    name: string;
    desired: (
      data: Buffer,
      opts?: { now?: string; version?: string },
    ) => ReturnType<typeof buildPullSecretManifest>;
  } {
    const id = `cls-${++ids}`;
    const ns = `clusters-${id}`;
    if (withNamespace) server.createNamespace(ns);
    return {
      id,
      ns,
      name: `${id}-pull-secret`,
      desired: (data, opts = {}) =>
        buildPullSecretManifest({
          clusterId: id,
          pullSecret: data,
          secretPath: `projects/p/secrets/hyperfleet-${id}-pull-secret`,
          secretVersion: opts.version ?? '1',
          now: new Date(opts.now ?? '2025-01-01T00:00:00.000Z'),
        }),
    };
  }

  function stored(ns: string, name: string): V1Secret {
    const obj = server.getObject('secrets', ns, name);
    assert.ok(obj, `secret ${ns}/${name} should exist`);
    return obj as V1Secret;
  }

  before(async () => {
    server = await startKubernetesTestServer();
    writer = createKubernetesSecretWriter({
      kubeconfigPath: server.kubeconfigPath,
      conflictRetry: FAST_RETRY,
      logger,
    });
    const kc = new KubeConfig();
    kc.loadFromFile(server.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
  });
  after(() => server.close());

  it('creates the Secret when absent', async () => {
    const c = cluster();
    server.resetCalls();
    const result = await writer.apply(c.desired(V1));
    assert.equal(result.outcome, 'created');
    assert.equal(result.namespace, c.ns);
    assert.ok(result.resourceVersion);
    const s = stored(c.ns, c.name);
    assert.equal(s.type, 'kubernetes.io/dockerconfigjson');
    assert.deepEqual(s.metadata?.labels, { 'managed-by': 'hyperfleet', 'cluster-id': c.id });
    assert.equal(
      s.metadata?.annotations?.[ANNOTATIONS.secretPath],
      `projects/p/secrets/hyperfleet-${c.id}-pull-secret`,
    );
    assert.ok(Buffer.from(s.data?.[DOCKERCONFIGJSON_KEY] ?? '', 'base64').equals(V1));
    assert.equal(server.calls('GET', 'secrets'), 1);
    assert.equal(server.calls('POST', 'secrets'), 1);
  });

  it('is a no-op with zero writes when nothing changed', async () => {
    const c = cluster();
    await writer.apply(c.desired(V1));
    const before = stored(c.ns, c.name).metadata?.resourceVersion;
    server.resetCalls();
    const result = await writer.apply(c.desired(V1, { now: '2031-01-01T00:00:00.000Z' }));
    assert.equal(result.outcome, 'unchanged');
    assert.equal(result.resourceVersion, before);
    assert.equal(server.writes('secrets'), 0);
    assert.equal(server.calls('GET', 'secrets'), 1);
    assert.equal(
      stored(c.ns, c.name).metadata?.annotations?.[ANNOTATIONS.lastUpdated],
      '2025-01-01T00:00:00.000Z',
    );
  });

  it('reuses kept-alive connections: twenty applies, no new TLS handshake for each', async () => {
    const targets = Array.from({ length: 10 }, () => cluster());
    const before = server.connections();
    for (const c of targets) await writer.apply(c.desired(V1));
    for (const c of targets) assert.equal((await writer.apply(c.desired(V1))).outcome, 'unchanged');
    assert.ok(
      server.connections() - before <= 2,
      `${server.connections() - before} connections for 20 applies`,
    );
  });

  it('updates in place with one PUT when the content changes', async () => {
    const c = cluster();
    const created = await writer.apply(c.desired(V1));
    server.resetCalls();
    const result = await writer.apply(c.desired(V2, { now: '2025-06-01T00:00:00.000Z', version: '2' }));
    assert.equal(result.outcome, 'updated');
    assert.ok(Number(result.resourceVersion) > Number(created.resourceVersion));
    assert.equal(server.calls('PUT', 'secrets'), 1);
    assert.equal(server.writes('secrets'), 1);
    const s = stored(c.ns, c.name);
    assert.ok(Buffer.from(s.data?.[DOCKERCONFIGJSON_KEY] ?? '', 'base64').equals(V2));
    assert.equal(s.metadata?.annotations?.[ANNOTATIONS.secretVersion], '2');
    assert.equal(s.metadata?.annotations?.[ANNOTATIONS.lastUpdated], '2025-06-01T00:00:00.000Z');
  });

  it('updates our annotations alone without moving last-updated', async () => {
    const c = cluster();
    await writer.apply(c.desired(V1));
    const result = await writer.apply(c.desired(V1, { now: '2030-01-01T00:00:00.000Z', version: '9' }));
    assert.equal(result.outcome, 'updated');
    const annotations = stored(c.ns, c.name).metadata?.annotations ?? {};
    assert.equal(annotations[ANNOTATIONS.secretVersion], '9');
    assert.equal(annotations[ANNOTATIONS.lastUpdated], '2025-01-01T00:00:00.000Z');
  });

  it('re-reads and retries after a 409 Conflict', async () => {
    const c = cluster();
    await writer.apply(c.desired(V1));
    server.resetCalls();
    server.injectFault({ method: 'PUT', resource: 'secrets', status: 409, times: 1 });
    const result = await writer.apply(c.desired(V2));
    assert.equal(result.outcome, 'updated');
    assert.equal(server.calls('PUT', 'secrets'), 2);
    assert.equal(server.calls('GET', 'secrets'), 2);
    assert.ok(logger.lines.some((l) => l.includes('changed concurrently')));
  });

  it('retries a real stale-resourceVersion conflict from a concurrent writer', async () => {
    const c = cluster();
    await writer.apply(c.desired(V1));
    // Another client changes the Secret while our PUT is in flight: the delay holds our PUT.
    server.injectFault({ method: 'PUT', resource: 'secrets', delayMs: 150, times: 1 });
    const ours = writer.apply(c.desired(V2));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const current = await core.readNamespacedSecret({ namespace: c.ns, name: c.name });
    await core.replaceNamespacedSecret({
      namespace: c.ns,
      name: c.name,
      body: {
        ...current,
        metadata: { ...current.metadata, labels: { ...current.metadata?.labels, other: 'writer' } },
      },
    });
    assert.equal((await ours).outcome, 'updated');
    const s = stored(c.ns, c.name);
    assert.equal(s.metadata?.labels?.other, 'writer');
    assert.ok(Buffer.from(s.data?.[DOCKERCONFIGJSON_KEY] ?? '', 'base64').equals(V2));
  });

  it('gives up with KUBE_CONFLICT after the retry budget', async () => {
    const c = cluster();
    await writer.apply(c.desired(V1));
    server.resetCalls();
    server.injectFault({ method: 'PUT', resource: 'secrets', status: 409, times: Infinity });
    try {
      await assert.rejects(
        writer.apply(c.desired(V2)),
        (err: unknown) => isCode('KUBE_CONFLICT')(err) && (err as PullSecretError).retryable,
      );
      assert.equal(server.calls('PUT', 'secrets'), FAST_RETRY.maxAttempts);
    } finally {
      server.clearFaults();
    }
  });

  it('keeps labels, annotations and data keys others added', async () => {
    const c = cluster();
    await writer.apply(c.desired(V1));
    const current = await core.readNamespacedSecret({ namespace: c.ns, name: c.name });
    await core.replaceNamespacedSecret({
      namespace: c.ns,
      name: c.name,
      body: {
        ...current,
        metadata: {
          ...current.metadata,
          labels: { ...current.metadata?.labels, team: 'payments' },
          annotations: { ...current.metadata?.annotations, 'example.com/owner': 'ops' },
        },
        data: { ...current.data, extra: Buffer.from('other').toString('base64') },
      },
    });
    const result = await writer.apply(c.desired(V2, { version: '2' }));
    assert.equal(result.outcome, 'updated');
    const s = stored(c.ns, c.name);
    assert.equal(s.metadata?.labels?.team, 'payments');
    assert.equal(s.metadata?.labels?.['managed-by'], 'hyperfleet');
    assert.equal(s.metadata?.annotations?.['example.com/owner'], 'ops');
    assert.equal(s.data?.extra, Buffer.from('other').toString('base64'));
    // A foreign change alone is not ours to undo: the next apply is a no-op.
    server.resetCalls();
    assert.equal((await writer.apply(c.desired(V2, { version: '2' }))).outcome, 'unchanged');
    assert.equal(server.writes(), 0);
  });

  it('repairs tampered data even when the fingerprint annotation still matches', async () => {
    const c = cluster();
    await writer.apply(c.desired(V1));
    const current = await core.readNamespacedSecret({ namespace: c.ns, name: c.name });
    const tampered = Buffer.from('{"auths":{"evil.io":{"auth":"eDp5"}}}').toString('base64');
    await core.replaceNamespacedSecret({
      namespace: c.ns,
      name: c.name,
      body: { ...current, data: { [DOCKERCONFIGJSON_KEY]: tampered } },
    });
    assert.equal((await writer.apply(c.desired(V1))).outcome, 'updated');
    assert.ok(Buffer.from(stored(c.ns, c.name).data?.[DOCKERCONFIGJSON_KEY] ?? '', 'base64').equals(V1));
  });

  it('refuses to modify or delete an unmanaged Secret', async () => {
    const c = cluster();
    server.seed({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: c.name, namespace: c.ns, labels: { owner: 'someone-else' } },
      type: 'Opaque',
      data: { a: 'YQ==' },
    });
    server.resetCalls();
    const refused = (err: unknown) =>
      isCode('SECRET_UNMANAGED')(err) &&
      (err as Error).message.includes(`${c.ns}/${c.name}`) &&
      !(err as PullSecretError).retryable;
    await assert.rejects(writer.apply(c.desired(V1)), refused);
    await assert.rejects(writer.remove(c.ns, c.name), refused);
    assert.equal(server.writes(), 0);
    assert.equal(stored(c.ns, c.name).type, 'Opaque');
  });

  it('recreates a Secret deleted behind its back', async () => {
    const c = cluster();
    await writer.apply(c.desired(V1));
    assert.equal(server.deleteObject('secrets', c.ns, c.name), true);
    assert.equal((await writer.apply(c.desired(V1))).outcome, 'created');
    assert.ok(server.getObject('secrets', c.ns, c.name));
  });

  it('surfaces 503 as retryable KUBE_UNAVAILABLE, then succeeds', async () => {
    const c = cluster();
    server.injectFault({ method: 'POST', resource: 'secrets', status: 503 });
    await assert.rejects(
      writer.apply(c.desired(V1)),
      (err: unknown) => isCode('KUBE_UNAVAILABLE')(err) && (err as PullSecretError).retryable,
    );
    assert.equal((await writer.apply(c.desired(V1))).outcome, 'created');
  });

  it('surfaces a reset connection as retryable KUBE_UNAVAILABLE', async () => {
    const c = cluster();
    server.injectFault({ method: 'GET', resource: 'secrets', reset: true });
    await assert.rejects(
      writer.apply(c.desired(V1)),
      (err: unknown) => isCode('KUBE_UNAVAILABLE')(err) && (err as PullSecretError).retryable,
    );
    assert.equal((await writer.apply(c.desired(V1))).outcome, 'created');
  });

  it('reports a missing namespace instead of creating it', async () => {
    const c = cluster(false);
    await assert.rejects(
      writer.apply(c.desired(V1)),
      (err: unknown) =>
        err instanceof PullSecretError &&
        err.retryable &&
        err.message.includes(`namespace "${c.ns}" does not exist`),
    );
    assert.equal(server.getObject('namespaces', undefined, c.ns), undefined);
  });

  it('reads a namespace being deleted (403 from NamespaceLifecycle) as the namespace going, not RBAC', async () => {
    const c = cluster();
    const release = server.holdNamespaceTermination();
    try {
      server.deleteObject('namespaces', undefined, c.ns);
      await assert.rejects(
        writer.apply(c.desired(V1)),
        (err: unknown) =>
          err instanceof PullSecretError &&
          err.code === 'NAMESPACE_NOT_FOUND' &&
          err.retryable &&
          /being deleted/.test(err.message),
      );
    } finally {
      release();
    }
  });

  it('classifies 403 and 401', async () => {
    const c = cluster();
    server.injectFault({ method: 'GET', resource: 'secrets', status: 403 });
    await assert.rejects(writer.apply(c.desired(V1)), isCode('KUBE_FORBIDDEN'));
    const wrongToken = new KubeConfig();
    wrongToken.loadFromString(
      (await readFile(server.kubeconfigPath, 'utf8')).replace(server.token, 'not-the-token'),
    );
    const dir = await mkdtemp(join(tmpdir(), 'kube-wrong-token-'));
    try {
      const path = join(dir, 'kubeconfig');
      await writeFile(path, wrongToken.exportConfig());
      await assert.rejects(
        createKubernetesSecretWriter({ kubeconfigPath: path }).apply(c.desired(V1)),
        isCode('KUBE_UNAUTHENTICATED'),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('aborts an in-flight call', async () => {
    const c = cluster();
    server.injectFault({ method: 'GET', resource: 'secrets', delayMs: 500 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(writer.apply(c.desired(V1), { signal: controller.signal }), isCode('ABORTED'));
  });

  it('removes only managed Secrets and reports absence', async () => {
    const c = cluster();
    await writer.apply(c.desired(V1));
    assert.equal(await writer.remove(c.ns, c.name), true);
    assert.equal(server.getObject('secrets', c.ns, c.name), undefined);
    assert.equal(await writer.remove(c.ns, c.name), false);
  });

  it('describes a Secret without its data', async () => {
    const c = cluster();
    await writer.apply(c.desired(V1));
    const d = await writer.describe(c.ns, c.name);
    assert.equal(d?.managed, true);
    assert.deepEqual(d?.dataKeys, [DOCKERCONFIGJSON_KEY]);
    assert.equal(d?.contentSha256, d?.annotations[ANNOTATIONS.contentSha256]);
    assert.equal(await writer.describe(c.ns, 'absent'), undefined);
  });

  it('connects with in-cluster service account settings', async () => {
    const c = cluster();
    const dir = await mkdtemp(join(tmpdir(), 'kube-sa-'));
    try {
      await writeFile(join(dir, 'token'), server.token);
      await writeFile(join(dir, 'ca.crt'), server.caPem);
      const port = new URL(server.url).port;
      const inCluster = createKubernetesSecretWriter({
        env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: port },
        serviceAccountDir: dir,
      });
      assert.equal(inCluster.location, server.url);
      assert.equal((await inCluster.apply(c.desired(V1))).outcome, 'created');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('manifest directory output', () => {
    let dir: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kube-manifests-'));
    });
    after(() => rm(dir, { recursive: true, force: true }));

    it('is a valid Secret the API server accepts', async () => {
      const c = cluster();
      const target = new ManifestDirectoryTarget({ directory: dir });
      await target.apply(c.desired(V1));
      const doc = parse(await readFile(target.pathOf(c.ns, c.name), 'utf8')) as V1Secret;
      new Secret(doc as never).validate();
      const created = await core.createNamespacedSecret({ namespace: c.ns, body: doc });
      assert.equal(created.type, 'kubernetes.io/dockerconfigjson');
      // What the directory target wrote is what the API target would have written.
      assert.equal((await writer.apply(c.desired(V1))).outcome, 'unchanged');
    });

    it(
      'applies with kubectl',
      { skip: existsSync('/usr/bin/kubectl') ? false : 'kubectl not installed' },
      async () => {
        const c = cluster();
        const target = new ManifestDirectoryTarget({ directory: dir });
        await target.apply(c.desired(V1));
        const home = join(dir, 'home');
        await mkdir(home, { recursive: true });
        const { stdout } = await promisify(execFile)(
          'kubectl',
          ['--kubeconfig', server.kubeconfigPath, 'apply', '-f', target.pathOf(c.ns, c.name)],
          { env: { ...process.env, HOME: home }, timeout: 30_000 },
        );
        assert.match(stdout, new RegExp(`secret/${c.name} created`));
        assert.equal(stored(c.ns, c.name).metadata?.labels?.['managed-by'], 'hyperfleet');
      },
    );
  });

  it('never leaks canary credentials into errors or logs', async () => {
    const raw = Buffer.from(CANARY_PULL_SECRET);
    const forbidden = [
      raw.toString('utf8').trim(),
      raw.toString('base64'),
      'cHVsbGJvdDpzM2NyM3QtY2FuYXJ5LTdRMnY=',
      'pullbot:s3cr3t-canary-7Q2v',
    ];
    const canaryLogger = captureLogger();
    const w = createKubernetesSecretWriter({
      kubeconfigPath: server.kubeconfigPath,
      conflictRetry: FAST_RETRY,
      logger: canaryLogger,
    });
    const errors: unknown[] = [];
    const attempt = async (fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (err) {
        errors.push(err);
      }
    };
    const c = cluster();
    const changed = Buffer.from(raw.toString('utf8').replace('canary@example.com', 'other@example.com'));
    await attempt(() => w.apply(c.desired(raw)));
    server.injectFault({ method: 'PUT', resource: 'secrets', status: 409, times: Infinity });
    await attempt(() => w.apply(c.desired(changed)));
    server.clearFaults();
    for (const status of [422, 500, 503, 403]) {
      server.injectFault({ method: 'PUT', resource: 'secrets', status });
      await attempt(() => w.apply(c.desired(changed)));
    }
    const missing = cluster(false);
    await attempt(() => w.apply(missing.desired(raw)));
    const foreign = cluster();
    server.seed({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: foreign.name, namespace: foreign.ns },
      type: 'kubernetes.io/dockerconfigjson',
      data: { [DOCKERCONFIGJSON_KEY]: raw.toString('base64') },
    });
    await attempt(() => w.apply(foreign.desired(raw)));
    assert.ok(errors.length >= 7, `expected failures, got ${errors.length}`);
    const texts = [
      ...errors.map((e) => JSON.stringify(describeError(e))),
      ...errors.map((e) => String((e as Error).stack)),
      ...canaryLogger.lines,
    ];
    for (const text of texts)
      for (const secret of forbidden)
        assert.ok(!text.includes(secret), `leaked canary into: ${text.slice(0, 200)}`);
  });
});
