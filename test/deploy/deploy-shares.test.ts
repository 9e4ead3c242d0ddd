// The PullSecretShare deployment (deploy/overlays/in-process-shares = in-process + components/shares),
// rendered with the kubectl on this machine: every object against its Kubernetes schema, the CRD's
// openAPIV3Schema against the worked example of docs/shares.md, the share controller's exact grants,
// the ServiceAccount admission policy, and an adapter config with shares on.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { before, describe, test } from 'node:test';
import type {
  V1ClusterRole,
  V1ConfigMap,
  V1CustomResourceDefinition,
  V1ValidatingAdmissionPolicy,
} from '@kubernetes/client-node';
import { Ajv } from 'ajv';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1';
import {
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { ClusterRole, ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { parseAllDocuments } from 'yaml';
import { loadAdapterConfig } from '../../src/adapter/config.js';
import { SHARE_GROUP, SHARE_KIND, SHARE_PLURAL, SHARE_VERSION } from '../../src/kube/share-types.js';
import { SOURCE_KINDS } from '../../src/shares/source-kinds.js';
import { admit, type AdmissionRequest } from '../support/admission-policy.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } } & Record<
  string,
  unknown
>;

async function render(overlay: string): Promise<Obj[]> {
  const { stdout } = await promisify(execFile)(
    'kubectl',
    ['kustomize', join(ROOT, 'deploy', 'overlays', overlay)],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as Obj)
    .filter((o) => o !== null);
}

const find = <T>(objects: Obj[], kind: string, name: string): T => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `${kind}/${name} is rendered`);
  return found as unknown as T;
};

/** The `yaml` blocks of docs/shares.md that hold a PullSecretShare. */
async function exampleShares(): Promise<Obj[]> {
  const text = await readFile(join(ROOT, 'docs', 'shares.md'), 'utf8');
  const blocks = [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  return blocks
    .flatMap((b) => parseAllDocuments(b).map((d) => d.toJS() as Obj))
    .filter((o) => o?.kind === SHARE_KIND);
}

describe('deploy/overlays/in-process-shares', () => {
  let objects: Obj[];
  before(async () => {
    objects = await render('in-process-shares');
  });

  test('the shares component validates against the Kubernetes schemas', () => {
    const models: Record<string, new (data: never) => { validate(): void }> = {
      CustomResourceDefinition,
      ClusterRole,
      ClusterRoleBinding,
      ValidatingAdmissionPolicy,
      ValidatingAdmissionPolicyBinding,
    };
    const ours = objects.filter((o) =>
      [
        'pullsecretshares.pullsecret.hyperfleet.io',
        'pullsecret-adapter-shares',
        'pullsecret-serviceaccount-image-pull-secrets-only',
      ].includes(o.metadata.name),
    );
    assert.equal(ours.length, 5);
    for (const obj of ours) {
      const Model = models[obj.kind];
      assert.ok(Model, obj.kind);
      assert.doesNotThrow(() => new Model(obj as never).validate(), `${obj.kind}/${obj.metadata.name}`);
      assert.equal(obj.metadata.namespace, undefined, 'cluster-scoped');
    }
  });

  test('the CRD serves the group, version and names the controller uses, with a status subresource', () => {
    const crd = find<V1CustomResourceDefinition>(
      objects,
      'CustomResourceDefinition',
      `${SHARE_PLURAL}.${SHARE_GROUP}`,
    );
    assert.equal(crd.spec.group, SHARE_GROUP);
    assert.equal(crd.spec.scope, 'Cluster');
    assert.equal(crd.spec.names.kind, SHARE_KIND);
    assert.equal(crd.spec.names.plural, SHARE_PLURAL);
    const version = crd.spec.versions.find((v) => v.name === SHARE_VERSION);
    assert.ok(version?.served && version.storage);
    assert.deepEqual(version.subresources?.status, {});
  });

  test("the docs' example shares pass the CRD schema; malformed ones do not", async () => {
    const crd = find<V1CustomResourceDefinition>(
      objects,
      'CustomResourceDefinition',
      `${SHARE_PLURAL}.${SHARE_GROUP}`,
    );
    const schema = crd.spec.versions[0]?.schema?.openAPIV3Schema;
    const validate = new Ajv({ strict: false, validateFormats: false }).compile(schema as object);
    const examples = await exampleShares();
    assert.ok(examples.length >= 1, 'docs/shares.md has an example share');
    for (const example of examples) assert.ok(validate(example), JSON.stringify(validate.errors));
    assert.equal(validate({ spec: { source: { clusterId: 'c1', kind: 'other' }, consumers: {} } }), false);
    assert.equal(validate({ spec: { consumers: {} } }), false);
    assert.equal(
      validate({ spec: { source: { clusterId: 'c1' }, consumers: { namespaces: 'team-a' } } }),
      false,
    );
  });

  test('the CRD offers exactly the source kinds the controller serves, and the docs show a share of each', async () => {
    const crd = find<V1CustomResourceDefinition>(
      objects,
      'CustomResourceDefinition',
      `${SHARE_PLURAL}.${SHARE_GROUP}`,
    );
    // Parsed YAML: the schema's own field names (`enum`, `default`), not the client's.
    type Props<T> = { properties: T };
    type KindSchema = { enum: string[]; default: string };
    const schema = crd.spec.versions[0]?.schema?.openAPIV3Schema as unknown as Props<{
      spec: Props<{ source: Props<{ kind: KindSchema }> }>;
    }>;
    const kind = schema.properties.spec.properties.source.properties.kind;
    assert.deepEqual([...kind.enum].sort(), Object.keys(SOURCE_KINDS).sort());
    assert.equal(kind.default, 'pullSecret');
    const shown = (await exampleShares()).map(
      (o) => (o.spec as { source?: { kind?: string } }).source?.kind ?? 'pullSecret',
    );
    assert.deepEqual([...new Set(shown)].sort(), Object.keys(SOURCE_KINDS).sort());
  });

  test('the share controller gets exactly its grants, with no wildcards', () => {
    const role = find<V1ClusterRole>(objects, 'ClusterRole', 'pullsecret-adapter-shares');
    const rules = (role.rules ?? []).flatMap((r) =>
      (r.resources ?? []).map((res) => `${(r.apiGroups ?? []).join('|')}/${res} ${r.verbs.join(',')}`),
    );
    assert.deepEqual(rules.sort(), [
      '/namespaces get,list,watch',
      '/secrets create,update,delete',
      '/serviceaccounts get,patch',
      'authorization.k8s.io/subjectaccessreviews create',
      'pullsecret.hyperfleet.io/pullsecretshares get,list,watch',
      'pullsecret.hyperfleet.io/pullsecretshares/status update,patch',
      'rbac.authorization.k8s.io/clusterrolebindings get,list,watch',
      'rbac.authorization.k8s.io/clusterroles get,list,watch',
      'rbac.authorization.k8s.io/rolebindings get,list,watch',
      'rbac.authorization.k8s.io/roles get,list,watch',
    ]);
    for (const rule of rules) {
      assert.doesNotMatch(rule, /\*/, 'no wildcard');
      assert.doesNotMatch(rule.split(' ')[1] ?? '', /\b(escalate|bind|impersonate)\b/);
    }
  });

  test('the admission policy lets the adapter change only imagePullSecrets of a ServiceAccount', () => {
    const policy = find<V1ValidatingAdmissionPolicy>(
      objects,
      'ValidatingAdmissionPolicy',
      'pullsecret-serviceaccount-image-pull-secrets-only',
    );
    const sa = {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'builder', namespace: 'team-a', labels: { a: 'b' } },
      imagePullSecrets: [{ name: 'theirs' }],
      secrets: [{ name: 'token' }],
    };
    const update = (
      object: unknown,
      username = 'system:serviceaccount:hyperfleet-system:pullsecret-adapter',
    ): AdmissionRequest => ({
      operation: 'UPDATE',
      username,
      resource: { group: '', version: 'v1', resource: 'serviceaccounts' },
      namespace: 'team-a',
      name: 'builder',
      object,
      oldObject: sa,
    });
    assert.equal(
      admit(policy, update({ ...sa, imagePullSecrets: [{ name: 'theirs' }, { name: 'ours' }] })).allowed,
      true,
    );
    assert.equal(admit(policy, update({ ...sa, imagePullSecrets: [] })).allowed, true);
    assert.equal(admit(policy, update({ ...sa, secrets: [] })).allowed, false);
    assert.equal(admit(policy, update({ ...sa, automountServiceAccountToken: false })).allowed, false);
    assert.equal(admit(policy, update({ ...sa, metadata: { ...sa.metadata, labels: {} } })).allowed, false);
    assert.equal(admit(policy, { ...update(undefined), operation: 'DELETE' }).allowed, false);
    assert.equal(
      admit(policy, update({ ...sa, secrets: [] }, 'system:serviceaccount:team-a:someone')).matched,
      false,
      'other users are none of its business',
    );
  });

  test('the adapter config turns shares on, and the adapter accepts it', async () => {
    const configMap = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('pullsecret-adapter-config'),
    ) as unknown as V1ConfigMap;
    const text = configMap.data?.['adapter.yaml'];
    assert.ok(text);
    const dir = await mkdtemp(join(tmpdir(), 'deploy-shares-'));
    try {
      await writeFile(join(dir, 'adapter.yaml'), text);
      const config = await loadAdapterConfig(join(dir, 'adapter.yaml'), {});
      assert.equal(config.shares.enabled, true);
      assert.equal(config.kubernetes.target, 'api');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
