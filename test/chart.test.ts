// The Helm chart (charts/pull-secret) with the real helm v4: `helm lint` and `helm template` over a
// matrix of values (each executor x broker x store, shares and KEDA on and off), every rendered
// object validated against its schema (Kubernetes' via kubernetes-models with no unknown fields, the
// Prometheus Operator's, KEDA's CRDs from test/fixtures/keda), the locked-down securityContext on
// every pod template and on the Jobs the adapter launches, an adapter config the adapter accepts,
// and values files with a typo or a wrong enum refused with the schema's message.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { V1ConfigMap, V1Deployment, V1NetworkPolicy, V1PodSpec } from '@kubernetes/client-node';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { parse } from 'yaml';
import { loadAdapterConfig, type AdapterConfig } from '../src/adapter/config.js';
import { buildPullSecretJob } from '../src/kube/job-manifest.js';
import { CHART, helmTemplate, NAMESPACE, ROOT, run, ToolError, withValues, type K8sObject } from './support/helm.js';
import { MODELS as KUBERNETES_MODELS, unknownFields, type SchemaModel } from './support/k8s-schema.js';

/** apiVersion/kind → [schema model, @kubernetes/client-node model for unknown fields, or none]. */
const MODELS: Record<string, [SchemaModel, string | undefined]> = {
  ...KUBERNETES_MODELS,
  'apiextensions.k8s.io/v1/CustomResourceDefinition': [CustomResourceDefinition, 'V1CustomResourceDefinition'],
  'monitoring.coreos.com/v1/ServiceMonitor': [ServiceMonitor, undefined],
  'monitoring.coreos.com/v1/PrometheusRule': [PrometheusRule, undefined],
};
const CLUSTER_SCOPED = new Set(['ClusterRole', 'ClusterRoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'CustomResourceDefinition']);
// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: true }));
const keda = Promise.all(['scaledobject', 'triggerauthentication'].map(async (n) => ajv.compile(JSON.parse(await readFile(join(ROOT, 'test', 'fixtures', 'keda', `${n}.schema.json`), 'utf8')) as object)));

/** Every schema error of `obj`, as `kind/name: what` lines. */
async function schemaErrors(obj: K8sObject): Promise<string[]> {
  const id = `${obj.kind}/${obj.metadata.name}`;
  const namespaced = !CLUSTER_SCOPED.has(obj.kind);
  const scope = (obj.metadata.namespace !== undefined) === namespaced ? [] : [`${id}: namespace ${String(obj.metadata.namespace)}`];
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
function assertLockedDown(pod: V1PodSpec | undefined, what: string): void {
  assert.ok(pod, `${what}: a pod spec`);
  assert.equal(pod.securityContext?.runAsNonRoot, true, `${what}: runAsNonRoot`);
  assert.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault', `${what}: seccomp RuntimeDefault`);
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
    assert.ok(tmp && emptyDirs.has(tmp.name) && tmp.readOnly !== true, `${what}/${c.name}: /tmp is a writable emptyDir`);
  }
}

function find<T = K8sObject>(objects: K8sObject[], kind: string, name?: string): T {
  const found = objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  assert.ok(found, `no ${kind}${name ? ` ${name}` : ''} rendered`);
  return found as T;
}

/** The config the adapter would load from the rendered ConfigMap, with the env its pod gets from Secrets. */
async function adapterConfig(objects: K8sObject[], deployment: V1Deployment): Promise<AdapterConfig> {
  const volume = deployment.spec?.template.spec?.volumes?.find((v) => v.configMap);
  const text = find<V1ConfigMap>(objects, 'ConfigMap', volume?.configMap?.name).data?.['adapter.yaml'] ?? '';
  const fromSecrets = (deployment.spec?.template.spec?.containers[0]?.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e): [string, string] => [e.name, 'amqp://u:p@rabbitmq.test:5672/']);
  const dir = await mkdtemp(join(tmpdir(), 'chart-config-'));
  try {
    await writeFile(join(dir, 'adapter.yaml'), text);
    return await loadAdapterConfig(join(dir, 'adapter.yaml'), Object.fromEntries(fromSecrets));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The failure of `helm template` with `values` (the test fails if it renders). */
async function refusal(values: object): Promise<ToolError> {
  const err = await helmTemplate(values).then(
    () => assert.fail('rendered'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ToolError, String(err));
  return err;
}

const IDENTITY = {
  gcp: { gcp: { serviceAccount: 'pullsecret-manager@platform-project.iam.gserviceaccount.com' } },
  aws: { aws: { roleArn: 'arn:aws:iam::123456789012:role/pullsecret-adapter' } },
  azure: { azure: { clientId: '00000000-1111-2222-3333-444444444444' } },
} as const;
const ANNOTATION = { gcp: 'iam.gke.io/gcp-service-account', aws: 'eks.amazonaws.com/role-arn', azure: 'azure.workload.identity/client-id' } as const;

interface Case {
  mode: 'in-process' | 'job';
  broker: 'pubsub' | 'rabbitmq';
  store: keyof typeof IDENTITY;
  shares: boolean;
  keda: boolean;
}
// Each executor x broker x store; shares and KEDA take all four on/off pairs across the stores.
const MATRIX: Case[] = (['in-process', 'job'] as const).flatMap((mode, m) =>
  (['pubsub', 'rabbitmq'] as const).flatMap((broker, b) =>
    (['gcp', 'aws', 'azure'] as const).map((store, s) => {
      const pair = (s + 2 * m + b) % 4;
      return { mode, broker, store, shares: pair % 2 === 1, keda: pair >= 2 };
    }),
  ),
);
const valuesOf = (c: Case) => ({
  execution: { mode: c.mode },
  broker: { type: c.broker },
  store: { type: c.store },
  identity: IDENTITY[c.store],
  shares: { enabled: c.shares },
  keda: { enabled: c.keda, pubsub: { projectId: 'platform-project' } },
});

test('the matrix covers every shares x KEDA pair in each executor and broker', () => {
  for (const mode of ['in-process', 'job']) {
    for (const broker of ['pubsub', 'rabbitmq']) {
      const pairs = new Set(MATRIX.filter((c) => c.mode === mode && c.broker === broker).map((c) => `${c.shares}/${c.keda}`));
      assert.ok(pairs.size >= 3, `${mode}/${broker}: ${[...pairs].join(' ')}`);
    }
  }
  assert.equal(new Set(MATRIX.flatMap((c) => [`${c.mode}/${c.shares}/${c.keda}`])).size, 8);
});

describe('helm lint and helm template over the values matrix', { concurrency: 4 }, () => {
  for (const c of MATRIX) {
    test(`${c.mode}, ${c.broker}, ${c.store}, shares ${c.shares ? 'on' : 'off'}, KEDA ${c.keda ? 'on' : 'off'}`, async () => {
      const values = valuesOf(c);
      const [lint, objects] = await Promise.all([withValues(values, (file) => run('helm', ['lint', '--strict', CHART, '--namespace', NAMESPACE, '--values', file])), helmTemplate(values)]);
      assert.match(lint, /1 chart\(s\) linted, 0 chart\(s\) failed/);
      assert.deepEqual((await Promise.all(objects.map(schemaErrors))).flat(), [], 'every object validates');

      const deployment = find<V1Deployment>(objects, 'Deployment', 'pullsecret-adapter');
      const podTemplates = objects.flatMap((o) => {
        const pod = (o as { spec?: { template?: { spec?: V1PodSpec } } }).spec?.template?.spec;
        return pod ? [[`${o.kind}/${o.metadata.name}`, pod] as const] : [];
      });
      assert.deepEqual(
        podTemplates.map(([id]) => id),
        ['Deployment/pullsecret-adapter'],
      );
      for (const [id, pod] of podTemplates) assertLockedDown(pod, id);
      assert.equal(deployment.spec?.replicas, c.keda ? undefined : 2, 'KEDA owns the replica count');
      const config = await adapterConfig(objects, deployment);
      assert.deepEqual([config.execution.mode, config.broker.type, config.store.type, config.shares.enabled], [c.mode, c.broker, c.store, c.shares]);

      const accounts = objects.filter((o) => o.kind === 'ServiceAccount');
      assert.deepEqual(accounts.map((a) => a.metadata.name).sort(), c.mode === 'job' ? ['pullsecret-adapter', 'pullsecret-adapter-job'] : ['pullsecret-adapter']);
      for (const a of accounts) assert.deepEqual(Object.keys(a.metadata.annotations ?? {}), [ANNOTATION[c.store]], `${a.metadata.name}: the ${c.store} identity only`);
      const podLabels = deployment.spec?.template.metadata?.labels ?? {};
      assert.equal(podLabels['azure.workload.identity/use'], c.store === 'azure' ? 'true' : undefined, 'AKS workload identity labels the pods');

      if (c.mode === 'job') {
        const job = config.execution.job;
        assert.equal(job.image, deployment.spec?.template.spec?.containers[0]?.image, 'the Jobs run the adapter image');
        assert.equal(job.namespace, NAMESPACE);
        assertLockedDown(buildPullSecretJob({ clusterId: 'cls-1', generation: 1, image: job.image, namespace: job.namespace, env: {} }).spec?.template.spec, 'Job');
      }
      assert.equal(
        objects.some((o) => o.kind === 'CustomResourceDefinition'),
        c.shares,
        'the shares CRD with shares only',
      );
      const scaled = objects.find((o) => o.kind === 'ScaledObject') as { spec: { triggers: Array<{ type: string; metadata: Record<string, string> }> } } | undefined;
      assert.equal(scaled !== undefined, c.keda);
      if (scaled) {
        const [trigger] = scaled.spec.triggers;
        assert.ok(config.broker.type !== 'embedded');
        if (c.broker === 'pubsub') assert.equal(trigger?.metadata.subscriptionName, `projects/platform-project/subscriptions/${config.broker.subscriptionId}`);
        else assert.equal(trigger?.metadata.queueName, `${config.broker.topic}-${config.broker.subscriptionId}`);
      }
      const egress = JSON.stringify(find(objects, 'NetworkPolicy', 'pullsecret-adapter'));
      assert.equal(egress.includes('5672'), c.broker === 'rabbitmq', 'RabbitMQ egress with RabbitMQ only');
    });
  }
});

describe('optional objects and what a user sees', () => {
  test('alerts, dashboard and identities: the repository files, for the Grafana sidecar and the Prometheus Operator', async () => {
    const token = { name: 'hyperfleet-token', mountPath: '/var/run/hyperfleet', readOnly: true };
    const objects = await helmTemplate({
      prometheusRule: { enabled: true },
      dashboard: { enabled: true, namespace: 'monitoring' },
      identity: IDENTITY.gcp,
      hyperfleetApi: { baseUrl: 'https://hyperfleet-api.example.com' },
      extraVolumes: [{ name: 'hyperfleet-token', secret: { secretName: 'hyperfleet-api-token' } }],
      extraVolumeMounts: [token],
      extraConfig: { hyperfleetApi: { tokenFile: '/var/run/hyperfleet/token' } },
    });
    assert.deepEqual((await Promise.all(objects.map(schemaErrors))).flat(), []);
    const deployment = find<V1Deployment>(objects, 'Deployment');
    assert.deepEqual(deployment.spec?.template.spec?.containers[0]?.volumeMounts?.at(-1), token);
    const config = await adapterConfig(objects, deployment);
    assert.equal(config.hyperfleetApi.tokenFile, '/var/run/hyperfleet/token', 'extraConfig is merged into the sections the chart writes');
    assert.equal(config.hyperfleetApi.baseUrl, 'https://hyperfleet-api.example.com');
    const egress = find<V1NetworkPolicy>(objects, 'NetworkPolicy', 'pullsecret-adapter').spec?.egress ?? [];
    assert.ok(
      egress.some((r) => JSON.stringify(r.ports) === '[{"port":443,"protocol":"TCP"}]'),
      'egress to the port of the HyperFleet API URL (443 for https without a port)',
    );
    assert.ok(!JSON.stringify(egress).includes('8000'));
    const rule = find<{ spec: unknown }>(objects, 'PrometheusRule');
    assert.deepEqual(rule.spec, (parse(await readFile(join(ROOT, 'dashboards', 'prometheus-rule.yaml'), 'utf8')) as { spec: unknown }).spec);
    const dashboard = find<V1ConfigMap & K8sObject>(objects, 'ConfigMap', 'pullsecret-adapter-dashboard');
    assert.equal(dashboard.metadata.namespace, 'monitoring');
    assert.equal(dashboard.metadata.labels?.grafana_dashboard, '1', 'the label the Grafana sidecar looks for');
    const json = await readFile(join(ROOT, 'dashboards', 'pull-secret-adapter.json'), 'utf8');
    assert.deepEqual(JSON.parse(dashboard.data?.['pull-secret-adapter.json'] ?? ''), JSON.parse(json));
  });

  test('the defaults render without a cloud identity, and NOTES say what to check next', async () => {
    const notes = await run('helm', ['install', 'pull-secret', CHART, '--namespace', NAMESPACE, '--dry-run=client', '--set', 'execution.mode=job']);
    assert.match(notes, /rollout status deploy\/pullsecret-adapter/);
    assert.match(notes, /validate-config --config \/etc\/pull-secret\/adapter.yaml/);
    assert.match(notes, /identity.gcp.serviceAccount is empty/);
    assert.match(notes, /get jobs -l app=pullsecret-job/);
  });

  test('docs/helm-values.md is the reference scripts/helm-values-doc.mjs writes from the schema, every key with its default', async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(ROOT, 'scripts', 'helm-values-doc.mjs'), '--check']).catch((err: { stdout: string; stderr: string }) => err);
    assert.equal(stderr, '', 'docs/helm-values.md is up to date');
    assert.equal(stdout, '');
    const doc = await readFile(join(ROOT, 'docs', 'helm-values.md'), 'utf8');
    assert.deepEqual(
      doc.split('\n').filter((l) => l.includes('| `none` |')),
      ["| `global` | object | `none` | Helm's values shared with parent charts (unused by this chart). |"],
      'values.yaml sets every key',
    );
  });

  test('KEDA on Pub/Sub without the platform project is refused, naming the value', async () => {
    const err = await refusal({ keda: { enabled: true } });
    assert.match(err.stderr, /keda\.pubsub\.projectId: the platform project of the subscription/);
  });

  test("the README's helm template command renders the chart", async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const command = /```sh\n(helm template [^`]+?)\n```/.exec(readme)?.[1];
    assert.ok(command, 'the README shows helm template');
    const args = command.replace(/\\\n/g, ' ').split(/\s+/).slice(1);
    const rendered = await run(
      'helm',
      args.map((a) => (a === 'charts/pull-secret' ? CHART : a)),
    );
    assert.match(rendered, /kind: Deployment/);
  });

  const refused: Array<[string, object, RegExp]> = [
    ['a typo at the top', { replica: 3 }, /additional properties 'replica' not allowed/],
    ['a typo inside a section', { keda: { enabled: true, minReplica: 3 } }, /at '\/keda': additional properties 'minReplica' not allowed/],
    ['a wrong enum', { broker: { type: 'kafka' } }, /at '\/broker\/type': value must be one of 'pubsub', 'rabbitmq'/],
    ['a wrong type', { replicas: '2' }, /at '\/replicas': got string, want integer/],
  ];
  for (const [what, values, message] of refused) {
    test(`a values file with ${what} is refused with the schema's message`, async () => {
      const err = await refusal(values);
      assert.match(err.stderr, /values don't meet the specifications of the schema/);
      assert.match(err.stderr, message);
    });
  }
});
