// The Kubernetes test server's RBAC evaluator, SubjectAccessReviews, the PullSecretShare custom
// resource and ServiceAccount patches, through the real @kubernetes/client-node over HTTPS.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiException, AuthorizationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { startKubernetesTestServer, type KubernetesTestServer } from './servers/kubernetes/server.js';

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

  const review = async (user: string, verb: string, name: string, namespace?: string, groups: string[] = []) => {
    const answer = await authz.createSubjectAccessReview({ body: { spec: { user, groups, resourceAttributes: { verb, group: GROUP, resource: 'pullsecretshares', name, namespace } } } });
    return answer.status?.allowed ?? false;
  };

  it('denies everything without bindings', async () => {
    assert.equal(await review('system:serviceaccount:team-a:default', 'use', 'shared'), false);
    assert.equal(await review('system:serviceaccount:team-a:default', 'use', 'shared', 'team-a'), false);
  });

  it('allows through a RoleBinding in the request namespace only, for the named resource', async () => {
    await rbac.createNamespacedRole({
      namespace: 'team-a',
      body: { metadata: { name: 'use-share' }, rules: [{ apiGroups: [GROUP], resources: ['pullsecretshares'], resourceNames: ['shared'], verbs: ['use'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'team-a',
      body: { metadata: { name: 'use-share' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'use-share' }, subjects: [{ kind: 'ServiceAccount', name: 'builder' }] },
    });
    assert.equal(await review('system:serviceaccount:team-a:builder', 'use', 'shared', 'team-a'), true);
    assert.equal(await review('system:serviceaccount:team-a:builder', 'use', 'other', 'team-a'), false, 'resourceNames limit the grant');
    assert.equal(await review('system:serviceaccount:team-a:builder', 'get', 'shared', 'team-a'), false, 'verbs limit the grant');
    assert.equal(await review('system:serviceaccount:team-a:builder', 'use', 'shared', 'team-b'), false, 'a RoleBinding grants in its namespace only');
    assert.equal(await review('system:serviceaccount:team-a:builder', 'use', 'shared'), false, 'a RoleBinding grants nothing cluster-wide');
    assert.equal(await review('system:serviceaccount:team-a:default', 'use', 'shared', 'team-a'), false, 'another service account');
    const answer = await authz.createSubjectAccessReview({
      body: { spec: { user: 'system:serviceaccount:team-a:builder', resourceAttributes: { verb: 'use', group: GROUP, resource: 'pullsecretshares', name: 'shared', namespace: 'team-a' } } },
    });
    assert.match(answer.status?.reason ?? '', /RoleBinding "use-share\/team-a" of Role "use-share" to ServiceAccount "builder\/team-a"/);
  });

  it('matches Group subjects, including the service account groups, and ClusterRoleBindings', async () => {
    await rbac.createClusterRole({ body: { metadata: { name: 'share-user' }, rules: [{ apiGroups: ['*'], resources: ['pullsecretshares'], verbs: ['use', 'get'] }] } });
    await rbac.createNamespacedRoleBinding({
      namespace: 'team-b',
      body: { metadata: { name: 'all-sas' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'share-user' }, subjects: [{ kind: 'Group', name: 'system:serviceaccounts:team-b' }] },
    });
    const sa = 'system:serviceaccount:team-b:default';
    assert.equal(await review(sa, 'use', 'x', 'team-b', ['system:serviceaccounts', 'system:serviceaccounts:team-b']), true);
    assert.equal(await review(sa, 'use', 'x', 'team-b'), false, 'groups are what the review names, never inferred');
    await rbac.createClusterRoleBinding({
      body: { metadata: { name: 'users' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'share-user' }, subjects: [{ kind: 'User', name: 'alice' }] },
    });
    assert.equal(await review('alice', 'get', 'anything'), true);
    assert.equal(await review('alice', 'get', 'anything', 'team-a'), true, 'a ClusterRoleBinding grants in every namespace');
    assert.equal(await review('bob', 'get', 'anything'), false);
    await rbac.deleteClusterRoleBinding({ name: 'users' });
    assert.equal(await review('alice', 'get', 'anything'), false, 'a deleted binding grants nothing');
  });

  it('refuses invalid reviews and bindings, and a changed roleRef', async () => {
    await assert.rejects(authz.createSubjectAccessReview({ body: { spec: { resourceAttributes: { verb: 'use' } } } }), (err: unknown) => err instanceof ApiException && err.code === 422);
    await assert.rejects(
      rbac.createNamespacedRoleBinding({ namespace: 'team-a', body: { metadata: { name: 'bad' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Secret', name: 'x' } } }),
      (err: unknown) => err instanceof ApiException && err.code === 422,
    );
    const binding = await rbac.readNamespacedRoleBinding({ namespace: 'team-a', name: 'use-share' });
    await assert.rejects(
      rbac.replaceNamespacedRoleBinding({ namespace: 'team-a', name: 'use-share', body: { ...binding, roleRef: { ...binding.roleRef, name: 'other' } } }),
      (err: unknown) => err instanceof ApiException && err.code === 422,
    );
  });

  it('serves PullSecretShares with a status subresource and generation', async () => {
    const body = { apiVersion: `${GROUP}/v1alpha1`, kind: 'PullSecretShare', metadata: { name: 'shared' }, spec: { source: { clusterId: 'c1', kind: 'pullSecret' }, consumers: { namespaces: ['team-a'] } } };
    const created = (await custom.createClusterCustomObject({ group: GROUP, version: 'v1alpha1', plural: 'pullsecretshares', body })) as { metadata: { generation: number } };
    assert.equal(created.metadata.generation, 1);
    const withStatus = { ...(await custom.getClusterCustomObject({ group: GROUP, version: 'v1alpha1', plural: 'pullsecretshares', name: 'shared' })), status: { observedGeneration: 1 } } as Record<
      string,
      unknown
    >;
    await custom.replaceClusterCustomObjectStatus({ group: GROUP, version: 'v1alpha1', plural: 'pullsecretshares', name: 'shared', body: withStatus });
    const stored = server.getObject('pullsecretshares', undefined, 'shared');
    assert.deepEqual(stored?.status, { observedGeneration: 1 });
    assert.equal(stored?.metadata.generation, 1, 'a status write does not bump the generation');
    const list = (await custom.listClusterCustomObject({ group: GROUP, version: 'v1alpha1', plural: 'pullsecretshares' })) as { items: unknown[] };
    assert.equal(list.items.length, 1);
    await assert.rejects(
      custom.createClusterCustomObject({ group: GROUP, version: 'v1alpha1', plural: 'pullsecretshares', body: { ...body, metadata: { name: 'bad' }, spec: { source: { kind: 'other' } } } }),
      (err: unknown) => err instanceof ApiException && err.code === 422,
    );
    await custom.deleteClusterCustomObject({ group: GROUP, version: 'v1alpha1', plural: 'pullsecretshares', name: 'shared' });
    assert.equal(server.getObject('pullsecretshares', undefined, 'shared'), undefined);
  });

  it('patches ServiceAccounts with a JSON patch, keeping other imagePullSecrets', async () => {
    await core.createNamespacedServiceAccount({ namespace: 'team-a', body: { metadata: { name: 'builder' }, imagePullSecrets: [{ name: 'theirs' }] } });
    const patched = await core.patchNamespacedServiceAccount({ namespace: 'team-a', name: 'builder', body: [{ op: 'add', path: '/imagePullSecrets/-', value: { name: 'ours' } }] });
    assert.deepEqual(
      patched.imagePullSecrets?.map((r) => r.name),
      ['theirs', 'ours'],
    );
  });
});
