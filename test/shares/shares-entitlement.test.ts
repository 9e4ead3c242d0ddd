// PullSecretShares of an entitlement bundle against the Kubernetes test server, through the real
// client: the entitlements feature itself (account-service stand-in, local store, Secret writer)
// provisions `etc-pki-entitlement`; the share projects it after an access review, follows a rotated
// certificate, and removes the copies when access is withdrawn, the source goes or the share is
// deleted. The certificate and key bytes appear in no log, metric, status, event or request.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import { createAccountServiceClient } from '../../src/account-service/client.js';
import {
  startAccountServiceStandIn,
  type AccountServiceStandIn,
} from '../../src/dev/account-service/index.js';
import {
  ENTITLEMENT_KEYS,
  ENTITLEMENT_SECRET_NAME,
  keyStrings,
  refreshEntitlement,
} from '../../src/entitlements/entitlement.js';
import { SHARE_API_VERSION, SHARE_CONTENT_ANNOTATION } from '../../src/kube/share-types.js';
import { createKubernetesSecretWriter } from '../../src/kube/secret-writer.js';
import type { ShareController } from '../../src/shares/controller.js';
import { LocalStore } from '../../src/stores/local/index.js';
import {
  startKubernetesTestServer,
  type KubeObject,
  type KubernetesTestServer,
} from '../servers/kubernetes/server.js';
import { until } from '../support/until.js';
import { startShareController } from './share-controller-harness.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const CLUSTER = 'ent-share-1';
const SOURCE_NS = `clusters-${CLUSTER}`;
const TOKEN = b64(`cluster-bot-${CLUSTER}:cloud-token-abcdef`);
const PULL_SECRET = Buffer.from(JSON.stringify({ auths: { 'cloud.openshift.com': { auth: TOKEN } } }));

function share(name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: SHARE_API_VERSION, kind: 'PullSecretShare', metadata: { name }, spec };
}

/** A ClusterRole granting `use` on every share, bound in one namespace to its `builder` service account. */
function grant(server: KubernetesTestServer, namespace: string): void {
  if (server.getObject('clusterroles', undefined, 'use-shares') === undefined)
    server.seed({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'use-shares' },
      rules: [{ apiGroups: ['pullsecret.hyperfleet.io'], resources: ['pullsecretshares'], verbs: ['use'] }],
    });
  server.seed({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'use-shares', namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'use-shares' },
    subjects: [{ kind: 'ServiceAccount', name: 'builder' }],
  });
}

type Status = {
  conditions?: { type: string; status: string; reason: string; message: string }[];
  consumers?: { namespace: string; result: string }[];
};

describe('PullSecretShare of an entitlement bundle', () => {
  let server: KubernetesTestServer;
  let service: AccountServiceStandIn;
  let store: LocalStore;
  let dir: string;
  let controller: ShareController;
  let registry: Registry;
  let logs: string[];
  const keys: string[] = [];
  const certs: string[] = [];
  const statusOf = (name: string) =>
    (server.getObject('pullsecretshares', undefined, name)?.status ?? {}) as Status;
  const consumer = (name: string, ns: string) => statusOf(name).consumers?.find((c) => c.namespace === ns);
  const copy = (ns: string, name: string) => server.getObject('secrets', ns, name);
  const dataOf = (ns: string, name: string) => (copy(ns, name)?.data ?? {}) as Record<string, string>;
  const sourceData = () => dataOf(SOURCE_NS, ENTITLEMENT_SECRET_NAME);

  /** Has the entitlements feature fetch the cluster's certificate and write `etc-pki-entitlement`. */
  async function provision(): Promise<void> {
    const outcome = await refreshEntitlement(CLUSTER, PULL_SECRET, {
      client: createAccountServiceClient({ baseUrl: service.url, timeoutMs: 5000 }),
      store,
      target: createKubernetesSecretWriter({ kubeconfigPath: server.kubeconfigPath }),
      push: { retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 } },
      intervalMs: 240,
      retries: 0,
    });
    assert.equal(outcome.kind, 'refreshed', JSON.stringify(outcome));
    const issued = service.issuedCertificate(CLUSTER);
    assert.ok(issued);
    keys.push(...keyStrings(issued.key));
    certs.push(...keyStrings(issued.cert));
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shares-entitlement-'));
    store = new LocalStore({ dir: join(dir, 'store') });
    service = await startAccountServiceStandIn();
    service.setClusterToken(CLUSTER, TOKEN);
    server = await startKubernetesTestServer({ namespaces: [SOURCE_NS, 'builds-a', 'builds-b'] });
    await provision();
    ({ controller, registry, logs } = startShareController(server));
  });
  after(async () => {
    await controller?.stop();
    await server?.close();
    await service?.stop();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('projects the bundle (type Opaque, its two keys) into the granted namespace only', async () => {
    grant(server, 'builds-a');
    server.seed(
      share('subs', {
        source: { clusterId: CLUSTER, kind: 'entitlement' },
        consumers: { namespaces: ['builds-a', 'builds-b'], serviceAccounts: ['builder'] },
        target: { secretName: ENTITLEMENT_SECRET_NAME },
      }),
    );
    await until('both consumers reported', () => statusOf('subs').consumers?.length === 2);
    assert.equal(statusOf('subs').conditions?.[0]?.reason, 'Projected', JSON.stringify(statusOf('subs')));
    assert.equal(consumer('subs', 'builds-a')?.result, 'granted');
    assert.equal(consumer('subs', 'builds-b')?.result, 'denied');
    const projected = copy('builds-a', ENTITLEMENT_SECRET_NAME);
    assert.equal(projected?.type, 'Opaque');
    assert.deepEqual(dataOf('builds-a', ENTITLEMENT_SECRET_NAME), sourceData());
    assert.deepEqual(Object.keys(sourceData()).sort(), [ENTITLEMENT_KEYS.key, ENTITLEMENT_KEYS.cert].sort());
    assert.equal(projected?.metadata.labels?.['pullsecret.hyperfleet.io/share'], 'subs');
    assert.equal(projected?.metadata.labels?.['cluster-id'], undefined, 'a copy is no source');
    assert.equal(copy('builds-b', ENTITLEMENT_SECRET_NAME), undefined, 'never in a denied namespace');
  });

  it('shares the pull secret and the entitlement of one cluster side by side, each from its own Secret', async () => {
    server.seed({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: `${CLUSTER}-pull-secret`,
        namespace: SOURCE_NS,
        labels: { 'managed-by': 'hyperfleet', 'cluster-id': CLUSTER },
      },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': PULL_SECRET.toString('base64') },
    });
    server.seed(
      share('regs', {
        source: { clusterId: CLUSTER },
        consumers: { namespaces: ['builds-a'], serviceAccounts: ['builder'] },
      }),
    );
    await until('pull secret projected', () => copy('builds-a', 'regs') !== undefined);
    assert.equal(copy('builds-a', 'regs')?.type, 'kubernetes.io/dockerconfigjson');
    assert.deepEqual(dataOf('builds-a', ENTITLEMENT_SECRET_NAME), sourceData());
    server.deleteObject('pullsecretshares', undefined, 'regs');
    await until('pull secret copy removed', () => copy('builds-a', 'regs') === undefined);
    assert.ok(copy('builds-a', ENTITLEMENT_SECRET_NAME), 'the entitlement copy stays');
  });

  it('brings a rotated certificate to every copy', async () => {
    grant(server, 'builds-b');
    await until('builds-b granted', () => copy('builds-b', ENTITLEMENT_SECRET_NAME) !== undefined);
    const before = sourceData();
    const digest = copy('builds-a', ENTITLEMENT_SECRET_NAME)?.metadata.annotations?.[
      SHARE_CONTENT_ANNOTATION
    ];
    service.rotateCertificate(CLUSTER);
    await provision();
    assert.notDeepEqual(sourceData(), before, 'the entitlements feature wrote the new certificate');
    await until('new certificate in every copy', () =>
      ['builds-a', 'builds-b'].every(
        (ns) => JSON.stringify(dataOf(ns, ENTITLEMENT_SECRET_NAME)) === JSON.stringify(sourceData()),
      ),
    );
    const after = copy('builds-a', ENTITLEMENT_SECRET_NAME)?.metadata.annotations?.[SHARE_CONTENT_ANNOTATION];
    assert.ok(digest !== undefined && after !== undefined && after !== digest, 'the content digest changed');
  });

  it('removes a copy when access is withdrawn, and every copy when the source or the share goes', async () => {
    server.deleteObject('rolebindings', 'builds-b', 'use-shares');
    await until('builds-b denied', () => consumer('subs', 'builds-b')?.result === 'denied');
    assert.equal(copy('builds-b', ENTITLEMENT_SECRET_NAME), undefined);
    assert.ok(copy('builds-a', ENTITLEMENT_SECRET_NAME), 'the other consumer keeps its copy');

    server.deleteObject('secrets', SOURCE_NS, ENTITLEMENT_SECRET_NAME);
    await until('source loss reported', () => statusOf('subs').conditions?.[0]?.reason === 'SourceNotFound');
    assert.match(statusOf('subs').conditions?.[0]?.message ?? '', /entitlement Secret etc-pki-entitlement/);
    assert.equal(copy('builds-a', ENTITLEMENT_SECRET_NAME), undefined);

    await provision();
    await until('projected again', () => copy('builds-a', ENTITLEMENT_SECRET_NAME) !== undefined);
    server.deleteObject('pullsecretshares', undefined, 'subs');
    await until('copy removed with the share', () => copy('builds-a', ENTITLEMENT_SECRET_NAME) === undefined);
    assert.ok(server.getObject('secrets', SOURCE_NS, ENTITLEMENT_SECRET_NAME), 'the source is never touched');
  });

  it('switching a share from the pull secret to the entitlement takes the copy out of imagePullSecrets', async () => {
    server.seed({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'builder', namespace: 'builds-a' },
      imagePullSecrets: [{ name: 'theirs' }],
    });
    const entries = () =>
      (
        (server.getObject('serviceaccounts', 'builds-a', 'builder')?.imagePullSecrets as
          { name: string }[] | undefined) ?? []
      ).map((r) => r.name);
    const spec = (kind: string, imagePullSecrets: boolean) => ({
      source: { clusterId: CLUSTER, kind },
      consumers: { namespaces: ['builds-a'], serviceAccounts: ['builder'] },
      target: { secretName: 'creds', imagePullSecrets },
    });
    server.apply(share('switch', spec('pullSecret', true)));
    await until('entry added', () => entries().includes('creds'));
    assert.equal(copy('builds-a', 'creds')?.type, 'kubernetes.io/dockerconfigjson');
    server.apply(share('switch', spec('entitlement', false)));
    await until('the copy made again as the bundle', () => copy('builds-a', 'creds')?.type === 'Opaque');
    await until('entry removed', () => !entries().includes('creds'));
    assert.deepEqual(entries(), ['theirs'], 'other entries kept');
    assert.deepEqual(dataOf('builds-a', 'creds'), sourceData());
    server.deleteObject('pullsecretshares', undefined, 'switch');
    await until('copy removed with the share', () => copy('builds-a', 'creds') === undefined);
  });

  it('never writes over the source itself: its own namespace as a consumer is a conflict', async () => {
    grant(server, SOURCE_NS);
    const source = server.getObject('secrets', SOURCE_NS, ENTITLEMENT_SECRET_NAME);
    assert.ok(source);
    server.seed(
      share('onto-source', {
        source: { clusterId: CLUSTER, kind: 'entitlement' },
        consumers: { namespaces: [SOURCE_NS], serviceAccounts: ['builder'] },
        target: { secretName: ENTITLEMENT_SECRET_NAME },
      }),
    );
    await until('reported', () => consumer('onto-source', SOURCE_NS) !== undefined);
    assert.equal(consumer('onto-source', SOURCE_NS)?.result, 'conflict');
    assert.deepEqual(server.getObject('secrets', SOURCE_NS, ENTITLEMENT_SECRET_NAME), source);
    server.deleteObject('pullsecretshares', undefined, 'onto-source');
    server.deleteObject('rolebindings', SOURCE_NS, 'use-shares');
  });

  it('refuses imagePullSecrets for an entitlement (not a registry credential)', async () => {
    server.seed(
      share('subs-pull', {
        source: { clusterId: CLUSTER, kind: 'entitlement' },
        consumers: { namespaces: ['builds-a'], serviceAccounts: ['builder'] },
        target: { imagePullSecrets: true },
      }),
    );
    await until('reported', () => statusOf('subs-pull').conditions !== undefined);
    assert.equal(statusOf('subs-pull').conditions?.[0]?.reason, 'InvalidSpec');
    assert.match(statusOf('subs-pull').conditions?.[0]?.message ?? '', /imagePullSecrets/);
    assert.equal(copy('builds-a', 'subs-pull'), undefined);
  });

  it('keeps the certificate and key bytes out of logs, metrics, statuses, events and requests', async () => {
    await controller.idle();
    assert.ok(keys.length > 2 && certs.length > 2, 'two certificates were issued');
    const text = [
      logs.join(''),
      await registry.metrics(),
      JSON.stringify(server.listObjects('pullsecretshares')),
      JSON.stringify(server.requests()),
    ].join('\n');
    // The controller reports through the share's status, never through Event objects.
    assert.equal(server.requests().filter((r) => r.resource === 'events').length, 0);
    // Whole PEMs and their base64 lines (a line shorter than 16 characters could match by chance).
    const needles = [...keys, ...certs].filter((n) => n.length >= 16);
    for (const needle of needles) assert.ok(!text.includes(needle), 'a certificate or key line leaked');
    assert.match(await registry.metrics(), /pullsecret_share_projections_total\{outcome="updated"\} [1-9]/);
    assert.match(
      await registry.metrics(),
      /pullsecret_share_removals_total\{reason="source-deleted"\} [1-9]/,
    );
  });
});
