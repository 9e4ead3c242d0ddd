// The share controller inside the adapter (shares.enabled), end to end: a cluster's pull secret
// provisioned by the adapter through the Kubernetes API test server is shared with a granted
// namespace; the copy follows the cluster's Secret, the metrics count it, the canary stays out of
// the logs and the share's status. With entitlements on too, the certificate the adapter's own
// refresh provisions is shared, follows its rotation and goes with the grant, under the deployed
// grants (in-process-shares), and its key reaches no log, metric or status.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  startAccountServiceStandIn,
  type AccountServiceStandIn,
} from '../../src/dev/account-service/index.js';
import { ENTITLEMENT_KEYS, ENTITLEMENT_SECRET_NAME, keyStrings } from '../../src/entitlements/entitlement.js';
import { SHARE_API_VERSION } from '../../src/kube/share-types.js';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { CANARY_PULL_SECRET, findCanary } from '../support/fixtures.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';
import { until } from '../support/until.js';

describe('adapter with shares.enabled (in-process, Kubernetes API)', () => {
  let kube: KubernetesTestServer;
  let stack: AdapterStack;

  before(async () => {
    kube = await startKubernetesTestServer({
      namespaces: ['team-a', 'team-b'],
      rbac: ['overlays/in-process-shares'],
    });
    const kubeconfig = await kube.serviceAccountKubeconfig('hyperfleet-system', 'pullsecret-adapter');
    stack = await startAdapterStack({
      kubernetes: { target: 'api', kubeconfig },
      shares: { enabled: true, recheckSeconds: 10 },
    });
  });
  after(async () => {
    await stack?.stop();
    await kube?.close();
  });

  test("shares the adapter's own Secret of a cluster with the granted namespace only", async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: CANARY_PULL_SECRET } });
    kube.createNamespace(`clusters-${cluster.id}`);
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    kube.seed({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'use-share', namespace: 'team-a' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'share-user' },
      subjects: [{ kind: 'Group', name: 'system:serviceaccounts:team-a' }],
    });
    kube.seed({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'share-user' },
      rules: [{ apiGroups: ['pullsecret.hyperfleet.io'], resources: ['pullsecretshares'], verbs: ['use'] }],
    });
    kube.seed({
      apiVersion: SHARE_API_VERSION,
      kind: 'PullSecretShare',
      metadata: { name: 'cluster-creds' },
      spec: { source: { clusterId: cluster.id }, consumers: { namespaces: ['team-a', 'team-b'] } },
    });
    const status = () =>
      kube.getObject('pullsecretshares', undefined, 'cluster-creds')?.status as
        { consumers?: { namespace: string; result: string }[] } | undefined;
    await until('both consumers reported', () => status()?.consumers?.length === 2);
    assert.deepEqual(
      status()?.consumers?.map((c) => `${c.namespace}=${c.result}`),
      ['team-a=granted', 'team-b=denied'],
    );
    const copy = kube.getObject('secrets', 'team-a', 'cluster-creds');
    assert.equal(
      Buffer.from(String((copy?.data as Record<string, string>)['.dockerconfigjson']), 'base64').toString(),
      CANARY_PULL_SECRET,
    );
    assert.equal(kube.getObject('secrets', 'team-b', 'cluster-creds'), undefined);
    const metrics = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    assert.match(metrics, /^pullsecret_share_projections_total\{outcome="created"\} 1$/m);
    assert.match(metrics, /^pullsecret_share_denials_total [1-9]\d*$/m);
    assert.equal(
      findCanary([stack.logs.join('\n'), metrics, JSON.stringify(status())].join('\n')),
      undefined,
    );
  });
});

describe('adapter with shares and entitlements enabled: an entitlement share', () => {
  let kube: KubernetesTestServer;
  let service: AccountServiceStandIn;
  let stack: AdapterStack;

  before(async () => {
    service = await startAccountServiceStandIn();
    kube = await startKubernetesTestServer({
      namespaces: ['builds'],
      rbac: ['overlays/in-process-shares'],
    });
    const kubeconfig = await kube.serviceAccountKubeconfig('hyperfleet-system', 'pullsecret-adapter');
    stack = await startAdapterStack({
      kubernetes: { target: 'api', kubeconfig },
      shares: { enabled: true, recheckSeconds: 10 },
      accountService: { baseUrl: service.url, timeoutMs: 2000, transfer: { interval: '1h', jitter: 0 } },
      entitlements: { enabled: true, interval: '1s', jitter: 0, requestsPerSecond: 50 },
    });
  });
  after(async () => {
    await stack?.stop();
    await kube?.close();
    await service?.stop();
  });

  test('projects the certificate, follows its rotation, removes it with the grant, leaks no key', async () => {
    const cloud = Buffer.from('cluster-bot:cloud-token-entshare-0001').toString('base64');
    const cluster = await stack.seedCluster({
      pullSecret: { data: JSON.stringify({ auths: { 'cloud.openshift.com': { auth: cloud } } }) },
    });
    const sourceNs = `clusters-${cluster.id}`;
    kube.createNamespace(sourceNs);
    service.setClusterToken(cluster.id, cloud);
    await until('etc-pki-entitlement provisioned', () =>
      kube.getObject('secrets', sourceNs, ENTITLEMENT_SECRET_NAME),
    );
    kube.seed({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'share-user' },
      rules: [{ apiGroups: ['pullsecret.hyperfleet.io'], resources: ['pullsecretshares'], verbs: ['use'] }],
    });
    kube.seed({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'use-share', namespace: 'builds' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'share-user' },
      subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'builds' }],
    });
    kube.seed({
      apiVersion: SHARE_API_VERSION,
      kind: 'PullSecretShare',
      metadata: { name: 'subs' },
      spec: {
        source: { clusterId: cluster.id, kind: 'entitlement' },
        consumers: { namespaces: ['builds'] },
        target: { secretName: ENTITLEMENT_SECRET_NAME },
      },
    });
    const copied = (ns: string) => {
      const data = kube.getObject('secrets', ns, ENTITLEMENT_SECRET_NAME)?.data as
        Record<string, string> | undefined;
      return Buffer.from(data?.[ENTITLEMENT_KEYS.key] ?? '', 'base64').toString();
    };
    const keys: string[] = [];
    const first = service.issuedCertificate(cluster.id)?.key ?? '';
    keys.push(...keyStrings(first));
    await until('the key copied into builds', () => copied('builds') === first);

    service.rotateCertificate(cluster.id);
    const rotated = await until('a new certificate provisioned', () => {
      const key = copied(sourceNs);
      return key !== first && key !== '' ? key : undefined;
    });
    keys.push(...keyStrings(rotated));
    await until('the rotated key copied into builds', () => copied('builds') === rotated);

    kube.deleteObject('rolebindings', 'builds', 'use-share');
    await until(
      'the copy removed with the grant',
      () => kube.getObject('secrets', 'builds', ENTITLEMENT_SECRET_NAME) === undefined,
    );
    const metrics = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    const text = [
      stack.logs.join('\n'),
      metrics,
      JSON.stringify(stack.api.listStatuses(cluster.id)),
      JSON.stringify(kube.getObject('pullsecretshares', undefined, 'subs')?.status),
    ].join('\n');
    assert.match(metrics, /^pullsecret_share_projections_total\{outcome="updated"\} [1-9]\d*$/m);
    assert.match(metrics, /^pullsecret_share_removals_total\{reason="revoked"\} [1-9]\d*$/m);
    for (const needle of keys.filter((n) => n.length >= 16))
      assert.ok(!text.includes(needle), 'a key line leaked');
  });
});
