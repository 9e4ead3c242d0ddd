// Checks of the objects the Helm chart renders (test/deploy/chart*.test.ts): each object against its schema
// (Kubernetes' via kubernetes-models with no unknown fields, the Prometheus Operator's, KEDA's CRDs
// from test/fixtures/keda), the locked-down pod, and the adapter config as the adapter loads it.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { V1ConfigMap, V1Deployment, V1PodSpec } from '@kubernetes/client-node';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1';
import {
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { loadAdapterConfig, type AdapterConfig } from '../../src/adapter/config.js';
import { ROOT, type K8sObject } from './helm.js';
import { MODELS as KUBERNETES_MODELS, unknownFields, type SchemaModel } from './k8s-schema.js';

/** apiVersion/kind → [schema model, @kubernetes/client-node model for unknown fields, or none]. */
const MODELS: Record<string, [SchemaModel, string | undefined]> = {
  ...KUBERNETES_MODELS,
  'apiextensions.k8s.io/v1/CustomResourceDefinition': [
    CustomResourceDefinition,
    'V1CustomResourceDefinition',
  ],
  'monitoring.coreos.com/v1/ServiceMonitor': [ServiceMonitor, undefined],
  'monitoring.coreos.com/v1/PrometheusRule': [PrometheusRule, undefined],
};
const CLUSTER_SCOPED = new Set([
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'CustomResourceDefinition',
]);
// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: true }));
const keda = Promise.all(
  ['scaledobject', 'triggerauthentication'].map(async (n) =>
    ajv.compile(
      JSON.parse(
        await readFile(join(ROOT, 'test', 'fixtures', 'keda', `${n}.schema.json`), 'utf8'),
      ) as object,
    ),
  ),
);

/** Every schema error of `obj`, as `kind/name: what` lines. */
export async function schemaErrors(obj: K8sObject): Promise<string[]> {
  const id = `${obj.kind}/${obj.metadata.name}`;
  const namespaced = !CLUSTER_SCOPED.has(obj.kind);
  const scope =
    (obj.metadata.namespace !== undefined) === namespaced
      ? []
      : [`${id}: namespace ${String(obj.metadata.namespace)}`];
  if (obj.apiVersion === 'keda.sh/v1alpha1') {
    const [scaledObject, triggerAuthentication] = await keda;
    const validate = obj.kind === 'ScaledObject' ? scaledObject : triggerAuthentication;
    return validate?.(obj) ? scope : [...scope, `${id}: ${ajv.errorsText(validate?.errors)}`];
  }
  const entry = MODELS[`${obj.apiVersion}/${obj.kind}`];
  if (!entry) return [`${id}: unexpected kind ${obj.apiVersion}/${obj.kind}`];
  const [Kind, clientModel] = entry;
  try {
    new Kind(obj as never).validate();
  } catch (err) {
    return [...scope, `${id}: ${String(err)}`];
  }
  return [...scope, ...(clientModel ? unknownFields(obj, clientModel, id) : [])];
}

/** The upstream Job's pod rules: non-root UID 1000, read-only root with /tmp writable, no privileges. */
export function assertLockedDown(pod: V1PodSpec | undefined, what: string): void {
  assert.ok(pod, `${what}: a pod spec`);
  assert.equal(pod.securityContext?.runAsNonRoot, true, `${what}: runAsNonRoot`);
  assert.equal(
    pod.securityContext?.seccompProfile?.type,
    'RuntimeDefault',
    `${what}: seccomp RuntimeDefault`,
  );
  const emptyDirs = new Set((pod.volumes ?? []).filter((v) => v.emptyDir).map((v) => v.name));
  for (const c of pod.containers) {
    const sc = c.securityContext ?? {};
    assert.equal(sc.runAsUser ?? pod.securityContext.runAsUser, 1000, `${what}/${c.name}: UID 1000`);
    assert.equal(sc.allowPrivilegeEscalation, false, `${what}/${c.name}: allowPrivilegeEscalation`);
    assert.equal(sc.readOnlyRootFilesystem, true, `${what}/${c.name}: readOnlyRootFilesystem`);
    assert.notEqual(sc.privileged, true, `${what}/${c.name}: privileged`);
    assert.deepEqual(sc.capabilities?.drop, ['ALL'], `${what}/${c.name}: drop ALL`);
    assert.equal(sc.capabilities?.add, undefined, `${what}/${c.name}: no added capabilities`);
    const tmp = c.volumeMounts?.find((m) => m.mountPath === '/tmp');
    assert.ok(
      tmp && emptyDirs.has(tmp.name) && tmp.readOnly !== true,
      `${what}/${c.name}: /tmp is a writable emptyDir`,
    );
  }
}

export function find<T = K8sObject>(objects: K8sObject[], kind: string, name?: string): T {
  const found = objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  assert.ok(found, `no ${kind}${name ? ` ${name}` : ''} rendered`);
  return found as T;
}

/** The config the adapter would load from the rendered ConfigMap, with the env its pod gets from Secrets. */
export async function adapterConfig(objects: K8sObject[], deployment: V1Deployment): Promise<AdapterConfig> {
  const volume = deployment.spec?.template.spec?.volumes?.find((v) => v.configMap);
  const text = find<V1ConfigMap>(objects, 'ConfigMap', volume?.configMap?.name).data?.['adapter.yaml'] ?? '';
  const fromSecrets = (deployment.spec?.template.spec?.containers[0]?.env ?? [])
    .filter((e) => e.valueFrom?.secretKeyRef)
    .map((e): [string, string] => [e.name, 'amqp://u:p@rabbitmq.test:5672/']);
  const dir = await mkdtemp(join(tmpdir(), 'chart-config-'));
  try {
    await writeFile(join(dir, 'adapter.yaml'), text);
    return await loadAdapterConfig(join(dir, 'adapter.yaml'), Object.fromEntries(fromSecrets));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Values giving each store's cloud identity. */
export const IDENTITY = {
  gcp: { gcp: { serviceAccount: 'pullsecret-manager@platform-project.iam.gserviceaccount.com' } },
  aws: { aws: { roleArn: 'arn:aws:iam::123456789012:role/pullsecret-adapter' } },
  azure: { azure: { clientId: '00000000-1111-2222-3333-444444444444' } },
} as const;
