// Rollback pins as ConfigMaps, over the real client against the Kubernetes API test server: one
// replica writes, another (watching) sees the pin without a call per read; a ConfigMap of that name
// that is not ours is neither read, overwritten nor deleted; the object holds no credential.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PullSecretError } from '../../src/errors/index.js';
import { fingerprint } from '../../src/pullsecret/canonical.js';
import { configMapPinStore } from '../../src/retention/pin-config-maps.js';
import type { Pin, PinStore } from '../../src/retention/pin.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';
import { CANARY_PULL_SECRET, findCanary } from '../support/fixtures.js';
import { until } from '../support/until.js';

const NAMESPACE = 'hyperfleet-system';
const RETRY = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 };

const pinOf = (clusterId: string): Pin => ({
  clusterId,
  secretId: `hyperfleet-${clusterId}-pull-secret`,
  sourceVersion: '2',
  version: '4',
  contentSha256: fingerprint(Buffer.from(CANARY_PULL_SECRET)),
  by: 'cli (ops)',
  at: '2026-01-01T10:00:00.000Z',
  reason: 'bad credential in v3',
});

describe('rollback pins as ConfigMaps', () => {
  let kube: KubernetesTestServer;
  let writer: PinStore;
  let watching: PinStore;

  before(async () => {
    kube = await startKubernetesTestServer({ namespaces: [NAMESPACE] });
    writer = configMapPinStore({ namespace: NAMESPACE, kubeconfigPath: kube.kubeconfigPath });
    watching = configMapPinStore({
      namespace: NAMESPACE,
      kubeconfigPath: kube.kubeconfigPath,
      watch: { retry: RETRY },
    });
  });
  after(async () => {
    watching?.stop?.();
    await kube?.close();
  });

  it('a pin one replica writes reaches a watching one, which then reads it without a call', async () => {
    const pin = pinOf('c-pin-1');
    await writer.put(pin);
    const cm = kube.getObject('configmaps', NAMESPACE, 'pull-secret-pin-c-pin-1') as unknown as {
      metadata: { labels: Record<string, string> };
      data: Record<string, string>;
    };
    assert.equal(cm.metadata.labels['pullsecret.hyperfleet.io/pin'], 'true');
    assert.equal(cm.metadata.labels['managed-by'], 'hyperfleet');
    assert.equal(cm.data.contentSha256, pin.contentSha256);
    assert.equal(findCanary(JSON.stringify(cm)), undefined, 'digests and names, never a credential');

    await until(
      'the watching replica sees the pin',
      async () => (await watching.get('c-pin-1')) !== undefined,
    );
    const gets = kube.calls('GET', 'configmaps');
    assert.deepEqual(await watching.get('c-pin-1'), pin);
    assert.equal(await watching.get('c-no-pin'), undefined);
    assert.equal(kube.calls('GET', 'configmaps'), gets, 'answered from the watch');
    assert.deepEqual(await watching.get('c-pin-1', undefined, true), pin);
    assert.equal(kube.calls('GET', 'configmaps'), gets + 1, 'fresh: a read of the object');

    assert.equal(await writer.delete('c-pin-1'), true);
    await until(
      'the watching replica sees it gone',
      async () => (await watching.get('c-pin-1')) === undefined,
    );
    assert.equal(await writer.delete('c-pin-1'), false);
  });

  it("a ConfigMap of a pin's name without our labels is not a pin: not read, not overwritten, not deleted", async () => {
    kube.seed({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'pull-secret-pin-c-foreign', namespace: NAMESPACE },
      data: { clusterId: 'c-foreign' },
    });
    assert.equal(await writer.get('c-foreign'), undefined);
    await assert.rejects(writer.put(pinOf('c-foreign')), (err: unknown) => {
      assert.ok(err instanceof PullSecretError);
      assert.equal(err.code, 'SECRET_UNMANAGED');
      return true;
    });
    assert.equal(await writer.delete('c-foreign'), false);
    assert.ok(kube.getObject('configmaps', NAMESPACE, 'pull-secret-pin-c-foreign'));
  });
});
