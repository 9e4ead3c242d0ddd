import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { buildPullSecretManifest } from '../../src/kube/pull-secret-manifest.js';
import { SecretCache, type SecretChange } from '../../src/kube/secret-cache.js';
import { createKubernetesSecretWriter, type KubernetesSecretWriter } from '../../src/kube/secret-writer.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';
import { until } from '../support/until.js';

// The Secret writer reading through the informer's cache, against the Kubernetes API test server:
// what is skipped, what still reads, and that a stale or foreign entry never causes a skipped write.

const V1 = Buffer.from('{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}');
const V2 = Buffer.from('{"auths":{"quay.io":{"auth":"bmV3dXNlcjpuZXdwYXNz"}}}');
const WATCHED = 'clusters-019466a0-8f8e-7abc-9def-0123456789a1';
const OTHER = 'clusters-019466a0-8f8e-7abc-9def-0123456789a2';

function desired(namespace: string, data: Buffer) {
  const id = namespace.slice('clusters-'.length);
  return buildPullSecretManifest({
    clusterId: id,
    pullSecret: data,
    namespace,
    secretPath: `p/${id}`,
    secretVersion: '1',
  });
}

describe('Secret writer with the informer cache', () => {
  let server: KubernetesTestServer;
  let cache: SecretCache;
  let writer: KubernetesSecretWriter;
  let core: CoreV1Api;
  const changes: SecretChange[] = [];
  const calls = () => server.requests().filter((r) => r.method !== 'WATCH');

  before(async () => {
    server = await startKubernetesTestServer({ namespaces: [WATCHED, OTHER] });
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(server.kubeconfigPath);
    core = kubeConfig.makeApiClient(CoreV1Api);
    cache = new SecretCache({ kubeConfig, namespaces: [WATCHED] });
    cache.onChange((c) => changes.push(c));
    writer = createKubernetesSecretWriter({ kubeconfigPath: server.kubeconfigPath, cache });
  });
  after(async () => {
    await cache.stop();
    await server.close();
  });

  it('reads with GET until the first list, then skips a no-op without any call', async () => {
    await writer.apply(desired(WATCHED, V1));
    server.resetCalls();
    await writer.apply(desired(WATCHED, V1));
    assert.deepEqual(
      calls().map((r) => r.method),
      ['GET'],
      'not synced yet: the cache is not trusted',
    );
    cache.start();
    await until('the first list', () => cache.synced);
    server.resetCalls();
    assert.equal((await writer.apply(desired(WATCHED, V1))).outcome, 'unchanged');
    assert.deepEqual(calls(), []);
  });

  it('writes a changed pull secret at once (the cache entry cannot match it)', async () => {
    server.resetCalls();
    assert.equal((await writer.apply(desired(WATCHED, V2))).outcome, 'updated');
    assert.deepEqual(
      calls().map((r) => r.method),
      ['GET', 'PUT'],
    );
    // The write's answer is in the cache: applying it again makes no call, even before its watch event.
    server.resetCalls();
    assert.equal((await writer.apply(desired(WATCHED, V2))).outcome, 'unchanged');
    assert.deepEqual(calls(), []);
  });

  it("someone else's edit reaches the cache, and the next apply writes the content back", async () => {
    const name = desired(WATCHED, V2).metadata.name;
    const current = await core.readNamespacedSecret({ namespace: WATCHED, name });
    const edited = await core.replaceNamespacedSecret({
      namespace: WATCHED,
      name,
      body: { ...current, data: { ...current.data, '.dockerconfigjson': V1.toString('base64') } },
    });
    await until(
      'the edit in the cache',
      () => cache.lookup(WATCHED, name)?.resourceVersion === edited.metadata?.resourceVersion,
    );
    assert.ok(changes.some((c) => c.current?.resourceVersion === edited.metadata?.resourceVersion));
    assert.equal((await writer.apply(desired(WATCHED, V2))).outcome, 'updated');
  });

  it('a namespace outside informer.namespaces is never cached: every apply reads', async () => {
    await writer.apply(desired(OTHER, V1));
    server.resetCalls();
    assert.equal((await writer.apply(desired(OTHER, V1))).outcome, 'unchanged');
    assert.deepEqual(
      calls().map((r) => r.method),
      ['GET'],
    );
    assert.equal(cache.lookup(OTHER, desired(OTHER, V1).metadata.name), undefined);
  });

  it('a deletion by the writer is announced (not drift); one by someone else is not', async () => {
    const name = desired(WATCHED, V2).metadata.name;
    changes.length = 0;
    assert.equal(await writer.remove(WATCHED, name), true);
    await until('a deletion reported', () => changes.some((c) => c.current === undefined));
    assert.equal(changes.find((c) => c.current === undefined)?.ours, true);
    await writer.apply(desired(WATCHED, V2));
    await until('the Secret in the cache', () => cache.lookup(WATCHED, name) !== undefined);
    changes.length = 0;
    server.deleteObject('secrets', WATCHED, name);
    await until('a deletion reported', () => changes.some((c) => c.current === undefined));
    assert.equal(changes.find((c) => c.current === undefined)?.ours, false);
    assert.equal(cache.lookup(WATCHED, name), undefined);
  });
});

describe('waiting for the first list', () => {
  let server: KubernetesTestServer;
  let kubeConfig: KubeConfig;
  before(async () => {
    server = await startKubernetesTestServer({ namespaces: [WATCHED] });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(server.kubeconfigPath);
  });
  after(async () => {
    await server.close();
  });

  it('answers false when the time passes first, true once listed, false once stopped', async () => {
    const cache = new SecretCache({ kubeConfig, namespaces: [WATCHED] });
    assert.equal(await cache.whenListed(30), false, 'not started: never listed');
    server.injectFault({ method: 'GET', resource: 'secrets', delayMs: 300 });
    cache.start();
    const waiting = cache.whenListed(10_000);
    assert.equal(cache.synced, false);
    assert.equal(await waiting, true);
    assert.equal(cache.synced, true);
    assert.equal(await cache.whenListed(0), true, 'listed before: at once');
    await cache.stop();
    const never = new SecretCache({ kubeConfig, namespaces: [WATCHED] });
    const stopped = never.whenListed(60_000);
    await never.stop();
    assert.equal(await stopped, false);
  });
});

describe('the informer follows watch bookmarks (allowWatchBookmarks)', () => {
  /**
   * After a change the cache's selection does not see, a bookmark is the only way its watch learns the
   * newer resourceVersion. Compaction then makes the old version 410 Gone: a cache that took the
   * bookmark resumes without a list, one that did not must list again.
   */
  async function relistsAfterCompaction(sendBookmark: boolean): Promise<string[]> {
    const server = await startKubernetesTestServer({ namespaces: [WATCHED] });
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(server.kubeconfigPath);
    const relists: string[] = [];
    const cache = new SecretCache({
      kubeConfig,
      retry: { maxAttempts: 1, baseDelayMs: 5, maxDelayMs: 20 },
      onRelist: (reason) => relists.push(reason),
    });
    try {
      cache.start();
      assert.equal(await cache.whenListed(10_000), true);
      await until('the watch is open', () => server.calls('WATCH', 'secrets') >= 1);
      server.seed({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'not-ours', namespace: WATCHED },
        data: {},
      });
      if (sendBookmark) server.sendBookmarks();
      server.compact();
      server.endWatches();
      await until('the watch is back', () => server.calls('WATCH', 'secrets') >= 2);
      const core = kubeConfig.makeApiClient(CoreV1Api);
      await core.createNamespacedSecret({ namespace: WATCHED, body: desired(WATCHED, V1) });
      await until(
        'the cache sees a new Secret',
        () => cache.lookup(WATCHED, `${WATCHED.slice('clusters-'.length)}-pull-secret`) !== undefined,
      );
      return relists;
    } finally {
      await cache.stop();
      await server.close();
    }
  }

  it('resumes from a bookmark without listing again; without one, the compacted version is listed again', async () => {
    assert.deepEqual(await relistsAfterCompaction(true), []);
    assert.deepEqual(await relistsAfterCompaction(false), ['expired']);
  });
});
