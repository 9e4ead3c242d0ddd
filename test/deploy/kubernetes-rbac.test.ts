// The Kubernetes test server's RBAC evaluator, SubjectAccessReviews, the PullSecretShare custom
// resource and ServiceAccount patches, through the real @kubernetes/client-node over HTTPS.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import {
  ApiException,
  AuthorizationV1Api,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  RbacAuthorizationV1Api,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { deployRbac } from '../servers/kubernetes/kustomize.js';
import {
  startKubernetesTestServer,
  type KubeObject,
  type KubernetesTestServer,
} from '../servers/kubernetes/server.js';

const GROUP = 'pullsecret.hyperfleet.io';

describe('Kubernetes test server: RBAC, SubjectAccessReview, PullSecretShare, ServiceAccount patch', () => {
  let server: KubernetesTestServer;
  let rbac: RbacAuthorizationV1Api;
  let authz: AuthorizationV1Api;
  let custom: CustomObjectsApi;
  let core: CoreV1Api;

  before(async () => {
    server = await startKubernetesTestServer({ namespaces: ['team-a', 'team-b'] });
    const kc = new KubeConfig();
    kc.loadFromFile(server.kubeconfigPath);
    rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    authz = kc.makeApiClient(AuthorizationV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    core = kc.makeApiClient(CoreV1Api);
  });
  after(() => server.close());

  const review = async (
    user: string,
    verb: string,
    name: string,
    namespace?: string,
    groups: string[] = [],
  ) => {
    const answer = await authz.createSubjectAccessReview({
      body: {
        spec: {
          user,
          groups,
          resourceAttributes: { verb, group: GROUP, resource: 'pullsecretshares', name, namespace },
        },
      },
    });
    return answer.status?.allowed ?? false;
  };

  it('denies everything without bindings', async () => {
    assert.equal(await review('system:serviceaccount:team-a:default', 'use', 'shared'), false);
    assert.equal(await review('system:serviceaccount:team-a:default', 'use', 'shared', 'team-a'), false);
  });

  it('allows through a RoleBinding in the request namespace only, for the named resource', async () => {
    await rbac.createNamespacedRole({
      namespace: 'team-a',
      body: {
        metadata: { name: 'use-share' },
        rules: [
          { apiGroups: [GROUP], resources: ['pullsecretshares'], resourceNames: ['shared'], verbs: ['use'] },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'team-a',
      body: {
        metadata: { name: 'use-share' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'use-share' },
        subjects: [{ kind: 'ServiceAccount', name: 'builder' }],
      },
    });
    assert.equal(await review('system:serviceaccount:team-a:builder', 'use', 'shared', 'team-a'), true);
    assert.equal(
      await review('system:serviceaccount:team-a:builder', 'use', 'other', 'team-a'),
      false,
      'resourceNames limit the grant',
    );
    assert.equal(
      await review('system:serviceaccount:team-a:builder', 'get', 'shared', 'team-a'),
      false,
      'verbs limit the grant',
    );
    assert.equal(
      await review('system:serviceaccount:team-a:builder', 'use', 'shared', 'team-b'),
      false,
      'a RoleBinding grants in its namespace only',
    );
    assert.equal(
      await review('system:serviceaccount:team-a:builder', 'use', 'shared'),
      false,
      'a RoleBinding grants nothing cluster-wide',
    );
    assert.equal(
      await review('system:serviceaccount:team-a:default', 'use', 'shared', 'team-a'),
      false,
      'another service account',
    );
    const answer = await authz.createSubjectAccessReview({
      body: {
        spec: {
          user: 'system:serviceaccount:team-a:builder',
          resourceAttributes: {
            verb: 'use',
            group: GROUP,
            resource: 'pullsecretshares',
            name: 'shared',
            namespace: 'team-a',
          },
        },
      },
    });
    assert.match(
      answer.status?.reason ?? '',
      /RoleBinding "use-share\/team-a" of Role "use-share" to ServiceAccount "builder\/team-a"/,
    );
  });

  it('matches Group subjects, including the service account groups, and ClusterRoleBindings', async () => {
    await rbac.createClusterRole({
      body: {
        metadata: { name: 'share-user' },
        rules: [{ apiGroups: ['*'], resources: ['pullsecretshares'], verbs: ['use', 'get'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'team-b',
      body: {
        metadata: { name: 'all-sas' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'share-user' },
        subjects: [{ kind: 'Group', name: 'system:serviceaccounts:team-b' }],
      },
    });
    const sa = 'system:serviceaccount:team-b:default';
    assert.equal(
      await review(sa, 'use', 'x', 'team-b', ['system:serviceaccounts', 'system:serviceaccounts:team-b']),
      true,
    );
    assert.equal(
      await review(sa, 'use', 'x', 'team-b'),
      false,
      'groups are what the review names, never inferred',
    );
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'users' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'share-user' },
        subjects: [{ kind: 'User', name: 'alice' }],
      },
    });
    assert.equal(await review('alice', 'get', 'anything'), true);
    assert.equal(
      await review('alice', 'get', 'anything', 'team-a'),
      true,
      'a ClusterRoleBinding grants in every namespace',
    );
    assert.equal(await review('bob', 'get', 'anything'), false);
    await rbac.deleteClusterRoleBinding({ name: 'users' });
    assert.equal(await review('alice', 'get', 'anything'), false, 'a deleted binding grants nothing');
  });

  it('refuses invalid reviews and bindings, and a changed roleRef', async () => {
    await assert.rejects(
      authz.createSubjectAccessReview({ body: { spec: { resourceAttributes: { verb: 'use' } } } }),
      (err: unknown) => err instanceof ApiException && err.code === 422,
    );
    await assert.rejects(
      rbac.createNamespacedRoleBinding({
        namespace: 'team-a',
        body: {
          metadata: { name: 'bad' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Secret', name: 'x' },
        },
      }),
      (err: unknown) => err instanceof ApiException && err.code === 422,
    );
    const binding = await rbac.readNamespacedRoleBinding({ namespace: 'team-a', name: 'use-share' });
    await assert.rejects(
      rbac.replaceNamespacedRoleBinding({
        namespace: 'team-a',
        name: 'use-share',
        body: { ...binding, roleRef: { ...binding.roleRef, name: 'other' } },
      }),
      (err: unknown) => err instanceof ApiException && err.code === 422,
    );
  });

  it('serves PullSecretShares with a status subresource and generation', async () => {
    const body = {
      apiVersion: `${GROUP}/v1alpha1`,
      kind: 'PullSecretShare',
      metadata: { name: 'shared' },
      spec: { source: { clusterId: 'c1', kind: 'pullSecret' }, consumers: { namespaces: ['team-a'] } },
    };
    const created = (await custom.createClusterCustomObject({
      group: GROUP,
      version: 'v1alpha1',
      plural: 'pullsecretshares',
      body,
    })) as { metadata: { generation: number } };
    assert.equal(created.metadata.generation, 1);
    const withStatus = {
      ...(await custom.getClusterCustomObject({
        group: GROUP,
        version: 'v1alpha1',
        plural: 'pullsecretshares',
        name: 'shared',
      })),
      status: { observedGeneration: 1 },
    } as Record<string, unknown>;
    await custom.replaceClusterCustomObjectStatus({
      group: GROUP,
      version: 'v1alpha1',
      plural: 'pullsecretshares',
      name: 'shared',
      body: withStatus,
    });
    const stored = server.getObject('pullsecretshares', undefined, 'shared');
    assert.deepEqual(stored?.status, { observedGeneration: 1 });
    assert.equal(stored?.metadata.generation, 1, 'a status write does not bump the generation');
    const list = (await custom.listClusterCustomObject({
      group: GROUP,
      version: 'v1alpha1',
      plural: 'pullsecretshares',
    })) as { items: unknown[] };
    assert.equal(list.items.length, 1);
    await assert.rejects(
      custom.createClusterCustomObject({
        group: GROUP,
        version: 'v1alpha1',
        plural: 'pullsecretshares',
        body: { ...body, metadata: { name: 'bad' }, spec: { source: { kind: 'other' } } },
      }),
      (err: unknown) => err instanceof ApiException && err.code === 422,
    );
    await custom.deleteClusterCustomObject({
      group: GROUP,
      version: 'v1alpha1',
      plural: 'pullsecretshares',
      name: 'shared',
    });
    assert.equal(server.getObject('pullsecretshares', undefined, 'shared'), undefined);
  });

  it('patches ServiceAccounts with a JSON patch, keeping other imagePullSecrets', async () => {
    await core.createNamespacedServiceAccount({
      namespace: 'team-a',
      body: { metadata: { name: 'builder' }, imagePullSecrets: [{ name: 'theirs' }] },
    });
    const patched = await core.patchNamespacedServiceAccount({
      namespace: 'team-a',
      name: 'builder',
      body: [{ op: 'add', path: '/imagePullSecrets/-', value: { name: 'ours' } }],
    });
    assert.deepEqual(
      patched.imagePullSecrets?.map((r) => r.name),
      ['theirs', 'ours'],
    );
  });
});

const apiOf = <T>(path: string, api: new (...args: never[]) => T): T => {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc.makeApiClient(api as never) as T;
};

/** The Status body of a refused call. */
function statusOf(err: unknown): Record<string, unknown> {
  assert.ok(err instanceof ApiException, String(err));
  return JSON.parse(err.body as string) as Record<string, unknown>;
}

describe('Kubernetes test server: every request is authorized (kubernetes/kubernetes pkg/kubeapiserver/authorizer/config.go)', () => {
  let server: KubernetesTestServer;
  before(async () => {
    server = await startKubernetesTestServer({ namespaces: ['team-a', 'hyperfleet-system'] });
  });
  after(() => server.close());

  it('answers a call RBAC does not allow with 403 and the API server Status; discovery stays allowed', async () => {
    const core = apiOf(await server.serviceAccountKubeconfig('team-a', 'nobody'), CoreV1Api);
    const err = await core.readNamespacedSecret({ namespace: 'team-a', name: 'x' }).catch((e: unknown) => e);
    assert.deepEqual(statusOf(err), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'secrets "x" is forbidden: User "system:serviceaccount:team-a:nobody" cannot get resource "secrets" in API group "" in the namespace "team-a"',
      reason: 'Forbidden',
      details: { name: 'x', kind: 'secrets' },
      code: 403,
    });
    const list = await core.listSecretForAllNamespaces().catch((e: unknown) => e);
    assert.equal(
      statusOf(list).message,
      'secrets is forbidden: User "system:serviceaccount:team-a:nobody" cannot list resource "secrets" in API group "" at the cluster scope',
    );
    const jobs = apiOf(await server.serviceAccountKubeconfig('team-a', 'nobody'), BatchV1Api);
    const status = await jobs
      .patchNamespacedJobStatus({ namespace: 'team-a', name: 'j', body: {} })
      .catch((e: unknown) => e);
    assert.match(
      String(statusOf(status).message),
      /cannot patch resource "jobs\/status" in API group "batch"/,
    );
    assert.deepEqual(
      server.forbidden().map((r) => [r.method, r.resource, r.user]),
      [
        ['GET', 'secrets', 'system:serviceaccount:team-a:nobody'],
        ['GET', 'secrets', 'system:serviceaccount:team-a:nobody'],
        ['PATCH', 'jobs', 'system:serviceaccount:team-a:nobody'],
      ],
    );
    // Discovery is granted to every authenticated client (bootstrap role system:discovery).
    assert.ok((await core.getAPIResources()).resources.some((r) => r.name === 'secrets'));
  });

  it('gives a ServiceAccount subject with no namespace the RoleBinding namespace (rule.go appliesToUser)', async () => {
    const rbac = apiOf(server.kubeconfigPath, RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: 'team-a',
      body: {
        metadata: { name: 'read' },
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'team-a',
      body: {
        metadata: { name: 'read' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read' },
        subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: '' }],
      },
    });
    server.seed({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'team-a' }, data: {} });
    const core = apiOf(await server.serviceAccountKubeconfig('team-a', 'reader'), CoreV1Api);
    assert.equal((await core.readNamespacedSecret({ namespace: 'team-a', name: 's' })).metadata?.name, 's');
    const other = apiOf(await server.serviceAccountKubeconfig('hyperfleet-system', 'reader'), CoreV1Api);
    await assert.rejects(
      other.readNamespacedSecret({ namespace: 'team-a', name: 's' }),
      (e: unknown) => statusOf(e).code === 403,
    );
  });

  it('always allows group system:masters, with or without bindings', async () => {
    const masters = apiOf(
      await server.kubeconfigFor({ user: 'root', groups: ['system:masters'] }),
      CoreV1Api,
    );
    assert.equal(
      (await masters.readNamespacedSecret({ namespace: 'team-a', name: 's' })).metadata?.name,
      's',
    );
    const authz = apiOf(server.kubeconfigPath, AuthorizationV1Api);
    const review = await authz.createSubjectAccessReview({
      body: {
        spec: {
          user: 'root',
          groups: ['system:masters'],
          resourceAttributes: { verb: 'delete', resource: 'nodes' },
        },
      },
    });
    assert.equal(review.status?.allowed, true);
  });

  it('evaluates aggregated ClusterRoles with the rules of the roles their selectors pick', async () => {
    const rbac = apiOf(server.kubeconfigPath, RbacAuthorizationV1Api);
    await rbac.createClusterRole({
      body: {
        metadata: { name: 'secret-reader-agg' },
        aggregationRule: {
          clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate-to-reader': 'true' } }],
        },
        rules: [],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'agg' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'secret-reader-agg' },
        subjects: [{ kind: 'User', name: 'carol' }],
      },
    });
    const core = apiOf(
      await server.kubeconfigFor({ user: 'carol', groups: ['system:authenticated'] }),
      CoreV1Api,
    );
    await assert.rejects(
      core.listNamespacedSecret({ namespace: 'team-a' }),
      (e: unknown) => statusOf(e).code === 403,
    );
    await rbac.createClusterRole({
      body: {
        metadata: { name: 'list-secrets', labels: { 'example.com/aggregate-to-reader': 'true' } },
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }],
      },
    });
    assert.equal((await core.listNamespacedSecret({ namespace: 'team-a' })).items.length, 1);
  });
});

/** The RBAC objects of a rendering, compared by kind, namespace, name, rules, roleRef and subjects. */
function rbacShape(objects: readonly KubeObject[]): string[] {
  return objects
    .filter((o) => o.kind !== 'ServiceAccount')
    .map((o) =>
      JSON.stringify([
        o.kind,
        o.metadata.namespace ?? '',
        o.metadata.name,
        o.rules ?? null,
        o.roleRef ?? null,
        o.subjects ?? null,
      ]),
    )
    .sort();
}

describe('the RBAC the deployment ships, loaded from deploy/', () => {
  const KUBECTL = '/usr/bin/kubectl';
  for (const overlay of ['overlays/in-process', 'overlays/job', 'overlays/in-process-shares']) {
    it(
      `renders ${overlay} as kubectl kustomize does`,
      { skip: existsSync(KUBECTL) ? false : 'kubectl is not installed' },
      () => {
        const text = execFileSync(
          KUBECTL,
          ['kustomize', new URL(`../../deploy/${overlay}`, import.meta.url).pathname],
          { encoding: 'utf8' },
        );
        const theirs = parseAllDocuments(text).map((d) => d.toJS() as KubeObject);
        const kinds = new Set(['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);
        assert.deepEqual(rbacShape(deployRbac(overlay)), rbacShape(theirs.filter((o) => kinds.has(o.kind))));
      },
    );
  }
});
