// The Helm chart (charts/pull-secret) with the real helm v4: `helm lint` and `helm template` over a
// matrix of values (each executor x broker x store, shares and KEDA on and off), every rendered
// object validated against its schema, the locked-down securityContext on every pod template and on
// the Jobs the adapter launches, the identity wiring of each store, and an adapter config the
// adapter accepts. Optional objects and refused values: test/deploy/chart-values.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Deployment, V1PodSpec } from '@kubernetes/client-node';
import { buildPullSecretJob } from '../../src/kube/job-manifest.js';
import { adapterConfig, assertLockedDown, find, IDENTITY, schemaErrors } from '../support/chart-checks.js';
import { CHART, helmTemplate, NAMESPACE, run, withValues } from '../support/helm.js';

const ANNOTATION = {
  gcp: 'iam.gke.io/gcp-service-account',
  aws: 'eks.amazonaws.com/role-arn',
  azure: 'azure.workload.identity/client-id',
} as const;

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
      const pairs = new Set(
        MATRIX.filter((c) => c.mode === mode && c.broker === broker).map((c) => `${c.shares}/${c.keda}`),
      );
      assert.ok(pairs.size >= 3, `${mode}/${broker}: ${[...pairs].join(' ')}`);
    }
  }
  assert.equal(new Set(MATRIX.flatMap((c) => [`${c.mode}/${c.shares}/${c.keda}`])).size, 8);
});

describe('helm lint and helm template over the values matrix', { concurrency: 4 }, () => {
  for (const c of MATRIX) {
    test(`${c.mode}, ${c.broker}, ${c.store}, shares ${c.shares ? 'on' : 'off'}, KEDA ${c.keda ? 'on' : 'off'}`, async () => {
      const values = valuesOf(c);
      const [lint, objects] = await Promise.all([
        withValues(values, (file) =>
          run('helm', ['lint', '--strict', CHART, '--namespace', NAMESPACE, '--values', file]),
        ),
        helmTemplate(values),
      ]);
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
      assert.deepEqual(
        [config.execution.mode, config.broker.type, config.store.type, config.shares.enabled],
        [c.mode, c.broker, c.store, c.shares],
      );

      const accounts = objects.filter((o) => o.kind === 'ServiceAccount');
      assert.deepEqual(
        accounts.map((a) => a.metadata.name).sort(),
        c.mode === 'job' ? ['pullsecret-adapter', 'pullsecret-adapter-job'] : ['pullsecret-adapter'],
      );
      for (const a of accounts)
        assert.deepEqual(
          Object.keys(a.metadata.annotations ?? {}),
          [ANNOTATION[c.store]],
          `${a.metadata.name}: the ${c.store} identity only`,
        );
      const podLabels = deployment.spec?.template.metadata?.labels ?? {};
      assert.equal(
        podLabels['azure.workload.identity/use'],
        c.store === 'azure' ? 'true' : undefined,
        'AKS workload identity labels the pods',
      );

      if (c.mode === 'job') {
        const job = config.execution.job;
        assert.equal(
          job.image,
          deployment.spec?.template.spec?.containers[0]?.image,
          'the Jobs run the adapter image',
        );
        assert.equal(job.namespace, NAMESPACE);
        assertLockedDown(
          buildPullSecretJob({
            clusterId: 'cls-1',
            generation: 1,
            image: job.image,
            namespace: job.namespace,
            env: {},
          }).spec?.template.spec,
          'Job',
        );
      }
      assert.equal(
        objects.some((o) => o.kind === 'CustomResourceDefinition'),
        c.shares,
        'the shares CRD with shares only',
      );
      const scaled = objects.find((o) => o.kind === 'ScaledObject') as
        { spec: { triggers: Array<{ type: string; metadata: Record<string, string> }> } } | undefined;
      assert.equal(scaled !== undefined, c.keda);
      if (scaled) {
        const [trigger] = scaled.spec.triggers;
        assert.ok(config.broker.type !== 'embedded');
        if (c.broker === 'pubsub')
          assert.equal(
            trigger?.metadata.subscriptionName,
            `projects/platform-project/subscriptions/${config.broker.subscriptionId}`,
          );
        else
          assert.equal(trigger?.metadata.queueName, `${config.broker.topic}-${config.broker.subscriptionId}`);
      }
      const egress = JSON.stringify(find(objects, 'NetworkPolicy', 'pullsecret-adapter'));
      assert.equal(egress.includes('5672'), c.broker === 'rabbitmq', 'RabbitMQ egress with RabbitMQ only');
    });
  }
});
