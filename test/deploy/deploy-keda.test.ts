// The optional KEDA components (deploy/components/keda-pubsub, keda-rabbitmq), rendered on top of each
// shipped overlay the way a user adds them, and checked: the KEDA objects against the schema of
// KEDA's own CRDs (test/fixtures/keda, no unknown fields), the patched Kubernetes objects against
// kubernetes-models, and what makes the autoscaling safe: at least 2 replicas and never zero, the
// PodDisruptionBudget still satisfiable, the trigger reading the queue or subscription the adapter
// consumes, and KEDA authenticating without a new credential.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type {
  V1ConfigMap,
  V1Deployment,
  V1NetworkPolicy,
  V1PodDisruptionBudget,
  V1ServiceAccount,
} from '@kubernetes/client-node';
import { Deployment } from 'kubernetes-models/apps/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { loadAdapterConfig, type AdapterConfig } from '../../src/adapter/config.js';
import { kustomizeWith } from '../support/helm.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = join(ROOT, 'test', 'fixtures', 'keda');
const BROKER_SECRET = { name: 'pullsecret-adapter-broker', key: 'url' };

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
}
interface ScaledObject extends Obj {
  spec: {
    scaleTargetRef: { apiVersion?: string; kind?: string; name: string };
    minReplicaCount?: number;
    maxReplicaCount?: number;
    idleReplicaCount?: number;
    cooldownPeriod?: number;
    triggers: Array<{
      type: string;
      metadata: Record<string, string>;
      authenticationRef?: { name: string; kind?: string };
    }>;
  };
}
interface TriggerAuthentication extends Obj {
  spec: {
    podIdentity?: { provider: string };
    secretTargetRef?: Array<{ parameter: string; name: string; key: string }>;
  };
}

// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: true }));
const schemas = Promise.all(
  ['scaledobject', 'triggerauthentication'].map(async (name) =>
    ajv.compile(JSON.parse(await readFile(join(FIXTURES, `${name}.schema.json`), 'utf8')) as object),
  ),
).then(([scaledObject, triggerAuthentication]) => ({
  ScaledObject: scaledObject,
  TriggerAuthentication: triggerAuthentication,
}));

/** Schema errors of a KEDA object, as `path message` lines (empty when it validates). */
async function kedaErrors(obj: Obj): Promise<string[]> {
  const validate = (await schemas)[obj.kind as 'ScaledObject' | 'TriggerAuthentication'];
  assert.ok(validate, `no KEDA schema for ${obj.kind}`);
  return validate(obj)
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

function only<T>(objects: Obj[], kind: string): T {
  const found = objects.filter((o) => o.kind === kind);
  assert.equal(found.length, 1, `exactly one ${kind} rendered`);
  return found[0] as T;
}

/** The adapter's config from the rendered ConfigMap, with the env the pod gets from Secrets (a test URL). */
async function adapterConfig(objects: Obj[]): Promise<AdapterConfig> {
  const configMap = objects.find(
    (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('pullsecret-adapter-config'),
  ) as V1ConfigMap | undefined;
  const dir = await mkdtemp(join(tmpdir(), 'deploy-keda-config-'));
  try {
    await writeFile(join(dir, 'adapter.yaml'), configMap?.data?.['adapter.yaml'] ?? '');
    const container = only<V1Deployment>(objects, 'Deployment').spec?.template.spec?.containers[0];
    const fromSecret = (container?.env ?? [])
      .filter((e) => e.valueFrom?.secretKeyRef !== undefined)
      .map((e): [string, string] => [e.name, 'amqp://keda:test@rabbitmq.hyperfleet-system.svc:5672/']);
    return await loadAdapterConfig(join(dir, 'adapter.yaml'), Object.fromEntries(fromSecret));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("KEDA's CRD schemas (test fixtures) refuse what the API server would", () => {
  const valid: ScaledObject = {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: { name: 'x' },
    spec: {
      scaleTargetRef: { name: 'x' },
      minReplicaCount: 2,
      triggers: [{ type: 'rabbitmq', metadata: { queueName: 'q' } }],
    },
  };
  test('a minimal ScaledObject validates', async () => assert.deepEqual(await kedaErrors(valid), []));
  test('an unknown field, a wrong type, a missing trigger type are refused', async () => {
    assert.notDeepEqual(await kedaErrors({ ...valid, spec: { ...valid.spec, minReplicas: 2 } } as Obj), []);
    assert.notDeepEqual(
      await kedaErrors({ ...valid, spec: { ...valid.spec, minReplicaCount: '2' } } as unknown as Obj),
      [],
    );
    assert.notDeepEqual(
      await kedaErrors({ ...valid, spec: { ...valid.spec, triggers: [{ metadata: {} }] } } as unknown as Obj),
      [],
    );
    assert.notDeepEqual(
      await kedaErrors({
        ...valid,
        spec: { ...valid.spec, triggers: [{ type: 'rabbitmq', metadata: { value: 50 } }] },
      } as unknown as Obj),
      [],
      'trigger metadata values are strings',
    );
  });
  test('a TriggerAuthentication with an unknown pod identity provider is refused', async () => {
    const ta: TriggerAuthentication = {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'TriggerAuthentication',
      metadata: { name: 'x' },
      spec: { podIdentity: { provider: 'gke' } },
    };
    assert.notDeepEqual(await kedaErrors(ta), []);
  });
});

for (const overlay of ['in-process', 'job']) {
  for (const component of ['keda-pubsub', 'keda-rabbitmq']) {
    describe(`deploy/components/${component} on deploy/overlays/${overlay}`, () => {
      const rendered = kustomizeWith(overlay, component);

      test("the KEDA objects validate against KEDA's CRD schema, the patched ones against Kubernetes'", async () => {
        const objects = await rendered;
        const keda = objects.filter((o) => o.apiVersion.startsWith('keda.sh/'));
        assert.deepEqual(keda.map((o) => o.kind).sort(), ['ScaledObject', 'TriggerAuthentication']);
        for (const obj of keda) {
          assert.equal(obj.apiVersion, 'keda.sh/v1alpha1');
          assert.deepEqual(await kedaErrors(obj), [], `${obj.kind}/${obj.metadata.name}`);
          assert.equal(obj.metadata.namespace, 'hyperfleet-system');
        }
        assert.doesNotThrow(() => new Deployment(only(objects, 'Deployment')).validate());
        for (const np of objects.filter((o) => o.kind === 'NetworkPolicy'))
          assert.doesNotThrow(() => new NetworkPolicy(np).validate());
      });

      test('scales the adapter Deployment between 2 and a bounded max, never to zero; the PDB stays satisfiable', async () => {
        const objects = await rendered;
        const scaled = only<ScaledObject>(objects, 'ScaledObject');
        const deployment = only<V1Deployment & Obj>(objects, 'Deployment');
        assert.deepEqual(
          [
            scaled.spec.scaleTargetRef.apiVersion ?? 'apps/v1',
            scaled.spec.scaleTargetRef.kind ?? 'Deployment',
            scaled.spec.scaleTargetRef.name,
          ],
          ['apps/v1', 'Deployment', deployment.metadata.name],
        );
        assert.equal(deployment.spec?.replicas, undefined, 'the replica count is left to KEDA');
        const min = scaled.spec.minReplicaCount ?? 0;
        const max = scaled.spec.maxReplicaCount ?? 100;
        assert.ok(min >= 2, 'at least two competing consumers');
        assert.equal(scaled.spec.idleReplicaCount, undefined, 'no scale to zero');
        assert.ok(max > min && max <= 20, `a bounded max (${max})`);
        assert.ok((scaled.spec.cooldownPeriod ?? 0) >= 60, 'a cooldown');
        const pdb = only<V1PodDisruptionBudget>(objects, 'PodDisruptionBudget');
        const selects = Object.entries(pdb.spec?.selector?.matchLabels ?? {}).every(
          ([k, v]) => deployment.spec?.template.metadata?.labels?.[k] === v,
        );
        assert.ok(selects, 'the PDB selects the scaled pods');
        // At the minimum, a voluntary disruption (node drain) may still evict at least one pod.
        const { minAvailable, maxUnavailable } = pdb.spec ?? {};
        if (minAvailable !== undefined)
          assert.ok(
            typeof minAvailable === 'number' && minAvailable >= 1 && min - minAvailable >= 1,
            `minAvailable ${String(minAvailable)} with ${min} replicas`,
          );
        else
          assert.ok(
            typeof maxUnavailable === 'number' && maxUnavailable >= 1 && maxUnavailable < min,
            `maxUnavailable ${String(maxUnavailable)} with ${min} replicas`,
          );
      });

      test('the trigger reads what the adapter consumes, and KEDA authenticates without a new credential', async () => {
        const objects = await rendered;
        const scaled = only<ScaledObject>(objects, 'ScaledObject');
        const auth = only<TriggerAuthentication>(objects, 'TriggerAuthentication');
        const config = await adapterConfig(objects);
        const [trigger, ...more] = scaled.spec.triggers;
        assert.ok(trigger && more.length === 0, 'one trigger');
        assert.deepEqual(
          [trigger.authenticationRef?.kind ?? 'TriggerAuthentication', trigger.authenticationRef?.name],
          ['TriggerAuthentication', auth.metadata.name],
        );
        assert.ok(
          Number(trigger.metadata.value) >= config.broker.maxInFlight,
          'the backlog per replica is at least what one replica holds',
        );
        if (component === 'keda-pubsub') {
          assert.equal(config.broker.type, 'pubsub');
          assert.equal(trigger.type, 'gcp-pubsub');
          assert.equal(trigger.metadata.mode, 'SubscriptionSize');
          const account = only<V1ServiceAccount & Obj>(
            objects.filter((o) => o.metadata.name === 'pullsecret-adapter'),
            'ServiceAccount',
          );
          const project = /@([^.]+)\.iam\.gserviceaccount\.com$/.exec(
            account.metadata.annotations?.['iam.gke.io/gcp-service-account'] ?? '',
          )?.[1];
          assert.equal(
            trigger.metadata.subscriptionName,
            `projects/${project}/subscriptions/${config.broker.subscriptionId}`,
          );
          assert.deepEqual(auth.spec, { podIdentity: { provider: 'gcp' } }, 'Workload Identity, no key');
        } else {
          assert.equal(config.broker.type, 'rabbitmq');
          assert.equal(trigger.type, 'rabbitmq');
          assert.equal(trigger.metadata.mode, 'QueueLength');
          assert.equal(trigger.metadata.protocol, 'amqp');
          assert.equal(
            config.broker.type === 'rabbitmq' && trigger.metadata.queueName,
            `${config.broker.topic}-${config.broker.subscriptionId}`,
          );
          assert.deepEqual(auth.spec, { secretTargetRef: [{ parameter: 'host', ...BROKER_SECRET }] });
          const container = only<V1Deployment>(objects, 'Deployment').spec?.template.spec?.containers[0];
          const brokerUrl = container?.env?.find((e) => e.name === 'BROKER_URL');
          assert.deepEqual(
            brokerUrl?.valueFrom?.secretKeyRef,
            BROKER_SECRET,
            'the adapter reads the same Secret',
          );
          const policy = objects.find(
            (o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'pullsecret-adapter',
          ) as V1NetworkPolicy | undefined;
          const egress = (policy?.spec?.egress ?? []).flatMap((r) =>
            (r.ports ?? []).map((p) => `${p.port}/${p.protocol}`),
          );
          assert.ok(egress.includes('5672/TCP') && egress.includes('5671/TCP'), 'egress to RabbitMQ');
        }
      });
    });
  }
}
