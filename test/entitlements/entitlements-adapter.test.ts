import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Secret } from '@kubernetes/client-node';
import {
  startAccountServiceStandIn,
  type AccountServiceStandIn,
} from '../../src/dev/account-service/index.js';
import {
  ENTITLEMENT_KEYS,
  ENTITLEMENT_SECRET_NAME,
  entitlementSecretId,
  keyStrings,
} from '../../src/entitlements/entitlement.js';
import { LocalStore } from '../../src/stores/local/index.js';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';
import { until } from '../support/until.js';

// The adapter starts the entitlement refresher (`entitlements.enabled`): the account-service stand-in
// issues certificates, the HyperFleet API stand-in lists the clusters, the Kubernetes API test server
// receives the Secret, the local store keeps the certificate; all over loopback.

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const pullSecretWith = (cloud: string) =>
  JSON.stringify({
    auths: {
      'cloud.openshift.com': { auth: cloud, email: 'a@example.com' },
      'quay.io': { auth: b64('q:quay-pw') },
    },
  });

const metricsText = (stack: AdapterStack) => stack.adapter.metrics.registry.metrics();

describe('adapter entitlement refreshes on the fleet schedule (interval 1s)', () => {
  let service: AccountServiceStandIn;
  let kube: KubernetesTestServer;
  let stack: AdapterStack;
  let store: LocalStore;

  before(async () => {
    service = await startAccountServiceStandIn();
    // The leader election's Lease (the refreshes run in the leader) is kept in hyperfleet-system.
    kube = await startKubernetesTestServer({ namespaces: ['hyperfleet-system'] });
    stack = await startAdapterStack({
      kubernetes: { target: 'api', kubeconfig: kube.kubeconfigPath },
      accountService: { baseUrl: service.url, timeoutMs: 2000, transfer: { interval: '1h', jitter: 0 } },
      entitlements: { enabled: true, interval: '1s', jitter: 0, requestsPerSecond: 50 },
    });
    store = new LocalStore({ dir: join(stack.dir, 'store') });
  });
  after(async () => {
    await stack.stop();
    await store.close();
    await kube.close();
    await service.stop();
  });

  it('provisions etc-pki-entitlement and the stored certificate without any event, reports entitlementExpiresAt, leaks no key', async () => {
    const cloud = b64('cluster-bot:cloud-token-entwire-0001');
    const cluster = await stack.seedCluster({ pullSecret: { data: pullSecretWith(cloud) } });
    kube.createNamespace(`clusters-${cluster.id}`);
    service.setClusterToken(cluster.id, cloud);

    const secret = await until(
      'the etc-pki-entitlement Secret',
      () =>
        kube.getObject('secrets', `clusters-${cluster.id}`, ENTITLEMENT_SECRET_NAME) as V1Secret | undefined,
    );
    const issued = service.issuedCertificate(cluster.id);
    assert.ok(issued, 'the stand-in issued a certificate');
    assert.equal(
      Buffer.from(secret.data?.[ENTITLEMENT_KEYS.cert] ?? '', 'base64').toString('utf8'),
      issued.cert,
    );
    assert.equal(
      Buffer.from(secret.data?.[ENTITLEMENT_KEYS.key] ?? '', 'base64').toString('utf8'),
      issued.key,
    );
    const stored = await until('the stored certificate', () =>
      store.accessLatestEnabled(entitlementSecretId(cluster.id)),
    );
    assert.deepEqual(JSON.parse(stored.data.toString('utf8')), { cert: issued.cert, key: issued.key });

    const expiresAt = new Date(new X509Certificate(issued.cert).validTo).toISOString();
    const status = await stack.waitForStatus(cluster.id, (s) => s.data?.entitlementExpiresAt !== undefined);
    assert.equal(status.data?.entitlementExpiresAt, expiresAt);
    assert.equal(conditionOf(status, 'Applied'), 'True/SecretCreated');
    assert.equal(conditionOf(status, 'Available'), 'True/SecretAvailable');
    // Scheduled refreshes go on (interval 1s) and find the same certificate: one stored version.
    // Waits on the metric, not the stand-in's call count: a refresh is counted only once its writes are done.
    const refreshed = async () =>
      Number(
        /^pullsecret_entitlement_refreshes_total\{result="refreshed"\} (\d+)$/m.exec(
          await metricsText(stack),
        )?.[1] ?? 0,
      );
    await until('two more refreshes', async () => ((await refreshed()) >= 3 ? true : undefined));
    assert.equal((await store.describe(entitlementSecretId(cluster.id)))?.versions.length, 1);
    const metrics = await metricsText(stack);

    const haystack = [
      stack.logs.join('\n'),
      metrics,
      JSON.stringify(stack.api.listStatuses(cluster.id)),
    ].join('\n');
    for (const needle of keyStrings(issued.key)) assert.ok(!haystack.includes(needle), 'a key line leaked');
    assert.ok(!haystack.includes(cloud), 'the cloud token leaked');
  });
});

describe('adapter entitlement refreshes after a new pull secret version (interval 1h)', () => {
  let service: AccountServiceStandIn;
  let stack: AdapterStack;

  before(async () => {
    service = await startAccountServiceStandIn();
    stack = await startAdapterStack({
      accountService: { baseUrl: service.url, timeoutMs: 2000, transfer: { interval: '1h', jitter: 0 } },
      entitlements: { enabled: true, interval: '1h', jitter: 0, requestsPerSecond: 50 },
    });
  });
  after(async () => {
    await stack.stop();
    await service.stop();
  });

  it('a cluster seen in an event is refreshed; a new pull secret version refreshes it at once; deletion forgets it', async () => {
    const first = b64('cluster-bot:cloud-token-entwire-first');
    const spec = { pullSecret: { data: pullSecretWith(first) } };
    const cluster = await stack.seedCluster(spec);
    service.setClusterToken(cluster.id, first);
    await stack.publish(cluster);
    await until('the first refresh', () => stack.adapter.entitlements?.expiry.expiresAt(cluster.id));
    assert.equal(service.calls.certificates, 1);

    // The cluster's token rotates: the old one is refused from now on, the new pull secret carries the new one.
    const second = b64('cluster-bot:cloud-token-entwire-second');
    service.setClusterToken(cluster.id, second);
    const patched = await stack.request('PATCH', `/clusters/${cluster.id}`, {
      spec: { ...stack.api.getCluster(cluster.id)?.spec, pullSecret: { data: pullSecretWith(second) } },
    });
    assert.equal(patched.status, 200);
    await stack.publish({ id: cluster.id, generation: 2 });
    await stack.waitForStatus(
      cluster.id,
      (s) => s.observed_generation === 2 && s.data?.secretVersion === '2',
    );
    await until('the refresh after the new version', () =>
      service.calls.certificates >= 2 ? true : undefined,
    );
    await until('counted as refreshed', async () =>
      /^pullsecret_entitlement_refreshes_total\{result="refreshed"\} 2$/m.test(await metricsText(stack))
        ? true
        : undefined,
    );
    assert.match(await metricsText(stack), /^pullsecret_entitlement_refreshes_total\{result="refused"\} 0$/m);

    const deleted = await stack.request('DELETE', `/clusters/${cluster.id}`);
    assert.ok(deleted.status < 300, `DELETE answered ${deleted.status}`);
    await stack.publish({ id: cluster.id, generation: stack.api.getCluster(cluster.id)?.generation ?? 3 });
    await until('the expiry forgotten', () =>
      stack.adapter.entitlements?.expiry.expiresAt(cluster.id) === undefined ? true : undefined,
    );
  });
});

describe('adapter finalize removes the deleted cluster entitlement (deletion.cloudSecret delete and retain)', () => {
  let service: AccountServiceStandIn;

  before(async () => {
    service = await startAccountServiceStandIn();
  });
  after(async () => {
    await service.stop();
  });

  /** Runs one adapter with `deletion.cloudSecret`, provisions one cluster's entitlement, deletes it, waits for Finalized. */
  async function provisionAndDelete(cloudSecret: 'delete' | 'retain', token: string) {
    const kube = await startKubernetesTestServer();
    const stack = await startAdapterStack({
      kubernetes: { target: 'api', kubeconfig: kube.kubeconfigPath },
      deletion: { cloudSecret },
      accountService: { baseUrl: service.url, timeoutMs: 2000, transfer: { interval: '1h', jitter: 0 } },
      entitlements: { enabled: true, interval: '1h', jitter: 0, requestsPerSecond: 50 },
    });
    const store = new LocalStore({ dir: join(stack.dir, 'store') });
    try {
      const cloud = b64(`cluster-bot:${token}`);
      const cluster = await stack.seedCluster({ pullSecret: { data: pullSecretWith(cloud) } });
      const namespace = `clusters-${cluster.id}`;
      kube.createNamespace(namespace);
      service.setClusterToken(cluster.id, cloud);
      // A second cluster without a cloud token never gets an entitlement; a foreign etc-pki-entitlement sits in its namespace.
      const other = await stack.seedCluster({
        pullSecret: { data: JSON.stringify({ auths: { 'quay.io': { auth: b64('q:quay-pw') } } }) },
      });
      const otherNamespace = `clusters-${other.id}`;
      kube.createNamespace(otherNamespace);
      kube.seed({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: ENTITLEMENT_SECRET_NAME,
          namespace: otherNamespace,
          labels: { 'cluster-id': other.id },
        },
        type: 'Opaque',
        data: { [ENTITLEMENT_KEYS.cert]: b64('foreign') },
      });

      await stack.publish(cluster);
      await stack.publish(other);
      await until('the etc-pki-entitlement Secret', () =>
        kube.getObject('secrets', namespace, ENTITLEMENT_SECRET_NAME),
      );
      await until('the stored certificate', () => store.getSecret(entitlementSecretId(cluster.id)));
      await stack.waitForStatus(other.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');

      kube.resetCalls();
      for (const c of [cluster, other]) {
        const deleted = await stack.request('DELETE', `/clusters/${c.id}`);
        assert.ok(deleted.status < 300, `DELETE answered ${deleted.status}`);
        await stack.publish({ id: c.id, generation: stack.api.getCluster(c.id)?.generation ?? 2 });
      }
      for (const c of [cluster, other])
        await until(`cluster ${c.id} removed after Finalized=True`, () =>
          stack.api.getCluster(c.id) === undefined ? true : undefined,
        );
      return {
        entitlementSecret: kube.getObject('secrets', namespace, ENTITLEMENT_SECRET_NAME),
        foreign: kube.getObject('secrets', otherNamespace, ENTITLEMENT_SECRET_NAME) as V1Secret | undefined,
        stored: await store.getSecret(entitlementSecretId(cluster.id)),
        // Reads of each namespace's etc-pki-entitlement by the cleanup.
        reads: [namespace, otherNamespace].map(
          (ns) =>
            kube
              .requests()
              .filter((r) => r.method === 'GET' && r.namespace === ns && r.name === ENTITLEMENT_SECRET_NAME)
              .length,
        ),
      };
    } finally {
      await stack.stop();
      await store.close();
      await kube.close();
    }
  }

  it('delete: etc-pki-entitlement and the stored entitlement are removed; a foreign etc-pki-entitlement is left untouched', async () => {
    const result = await provisionAndDelete('delete', 'cloud-token-entclean-delete');
    assert.equal(result.entitlementSecret, undefined, 'etc-pki-entitlement removed');
    assert.equal(result.stored, undefined, 'the stored entitlement deleted');
    assert.equal(
      Buffer.from(result.foreign?.data?.[ENTITLEMENT_KEYS.cert] ?? '', 'base64').toString('utf8'),
      'foreign',
      'the foreign Secret untouched',
    );
    assert.deepEqual(result.reads, [1, 1], 'each etc-pki-entitlement read once');
  });

  it('retain: etc-pki-entitlement is removed, the stored entitlement stays', async () => {
    const result = await provisionAndDelete('retain', 'cloud-token-entclean-retain');
    assert.equal(result.entitlementSecret, undefined, 'etc-pki-entitlement removed');
    assert.ok(result.stored, 'the stored entitlement retained');
    assert.ok(result.foreign, 'the foreign Secret untouched');
  });
});
