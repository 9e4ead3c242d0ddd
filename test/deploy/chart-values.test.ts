// The Helm chart's optional objects and what a user meets first: alerts and dashboard from the
// repository's files, extra volumes and configuration, NOTES, the README's command, the generated
// values reference, and values files refused with the schema's message (a typo, a wrong enum, a
// wrong type), all with the real helm v4.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { V1ConfigMap, V1Deployment, V1NetworkPolicy } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { adapterConfig, find, IDENTITY, schemaErrors } from '../support/chart-checks.js';
import { CHART, helmTemplate, NAMESPACE, ROOT, run, ToolError, type K8sObject } from '../support/helm.js';

/** The failure of `helm template` with `values` (the test fails if it renders). */
async function refusal(values: object): Promise<ToolError> {
  const err = await helmTemplate(values).then(
    () => assert.fail('rendered'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ToolError, String(err));
  return err;
}

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
    assert.equal(
      config.hyperfleetApi.tokenFile,
      '/var/run/hyperfleet/token',
      'extraConfig is merged into the sections the chart writes',
    );
    assert.equal(config.hyperfleetApi.baseUrl, 'https://hyperfleet-api.example.com');
    const egress = find<V1NetworkPolicy>(objects, 'NetworkPolicy', 'pullsecret-adapter').spec?.egress ?? [];
    assert.ok(
      egress.some((r) => JSON.stringify(r.ports) === '[{"port":443,"protocol":"TCP"}]'),
      'egress to the port of the HyperFleet API URL (443 for https without a port)',
    );
    assert.ok(!JSON.stringify(egress).includes('8000'));
    const rule = find<{ spec: unknown }>(objects, 'PrometheusRule');
    assert.deepEqual(
      rule.spec,
      (parse(await readFile(join(ROOT, 'dashboards', 'prometheus-rule.yaml'), 'utf8')) as { spec: unknown })
        .spec,
    );
    const dashboard = find<V1ConfigMap & K8sObject>(objects, 'ConfigMap', 'pullsecret-adapter-dashboard');
    assert.equal(dashboard.metadata.namespace, 'monitoring');
    assert.equal(
      dashboard.metadata.labels?.grafana_dashboard,
      '1',
      'the label the Grafana sidecar looks for',
    );
    const json = await readFile(join(ROOT, 'dashboards', 'pull-secret-adapter.json'), 'utf8');
    assert.deepEqual(JSON.parse(dashboard.data?.['pull-secret-adapter.json'] ?? ''), JSON.parse(json));
  });

  test('the defaults render without a cloud identity, and NOTES say what to check next', async () => {
    const notes = await run('helm', [
      'install',
      'pull-secret',
      CHART,
      '--namespace',
      NAMESPACE,
      '--dry-run=client',
      '--set',
      'execution.mode=job',
    ]);
    assert.match(notes, /rollout status deploy\/pullsecret-adapter/);
    assert.match(notes, /validate-config --config \/etc\/pull-secret\/adapter.yaml/);
    assert.match(notes, /identity.gcp.serviceAccount is empty/);
    assert.match(notes, /get jobs -l app=pullsecret-job/);
  });

  test('docs/helm-values.md is the reference scripts/helm-values-doc.mjs writes from the schema, every key with its default', async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [
      join(ROOT, 'scripts', 'helm-values-doc.mjs'),
      '--check',
    ]).catch((err: { stdout: string; stderr: string }) => err);
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
    [
      'a typo inside a section',
      { keda: { enabled: true, minReplica: 3 } },
      /at '\/keda': additional properties 'minReplica' not allowed/,
    ],
    [
      'a wrong enum',
      { broker: { type: 'kafka' } },
      /at '\/broker\/type': value must be one of 'pubsub', 'rabbitmq'/,
    ],
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
