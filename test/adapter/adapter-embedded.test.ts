import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { CANARY_PULL_SECRET, findCanary, VALID_PULL_SECRET } from '../support/fixtures.js';
import { until } from '../support/until.js';

// The adapter end to end on the embedded broker: API stand-in (validating every request against the
// contract), local store, manifest directory.

let stack: AdapterStack;
before(async () => (stack = await startAdapterStack()));
after(async () => stack.stop());

async function metric(name: string): Promise<string> {
  const text = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .join('\n');
}

test('happy path: stored, provisioned, reported Applied/Available/Health True', async () => {
  const cluster = await stack.seedCluster();
  await stack.publish(cluster);
  const status = await stack.waitForStatus(
    cluster.id,
    (s) => conditionOf(s, 'Available') === 'True/SecretAvailable',
  );
  assert.equal(conditionOf(status, 'Applied'), 'True/SecretCreated');
  assert.equal(conditionOf(status, 'Health'), 'True/Healthy');
  assert.equal(status.observed_generation, 1);
  assert.equal(status.data?.secretName, `hyperfleet-${cluster.id}-pull-secret`);
  assert.equal(status.data?.secretVersion, '1');
  const manifest = await readFile(
    join(stack.dir, 'manifests', `clusters-${cluster.id}`, `${cluster.id}-pull-secret.yaml`),
    'utf8',
  );
  assert.match(manifest, /kubernetes.io\/dockerconfigjson/);
  assert.equal(
    stack.api.getCluster(cluster.id)?.status.conditions.find((c) => c.type === 'PullsecretSuccessful')
      ?.status,
    'True',
  );
});

test('duplicate delivery and resync: no extra version, status still reported', async () => {
  const cluster = await stack.seedCluster();
  await stack.publish(cluster);
  await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Applied') === 'True/SecretCreated');
  await stack.publish(cluster);
  await stack.publish(cluster);
  const status = await stack.waitForStatus(
    cluster.id,
    (s) => conditionOf(s, 'Applied') === 'True/SecretUpToDate',
  );
  assert.equal(status.data?.secretVersion, '1');
  const files = await readdir(join(stack.dir, 'store', 'secrets'));
  assert.ok(files.some((f) => f.includes(cluster.id)));
});

test('new generation with changed data: a second version', async () => {
  const cluster = await stack.seedCluster();
  await stack.publish(cluster);
  await stack.waitForStatus(cluster.id, (s) => s.data?.secretVersion === '1');
  const changed = VALID_PULL_SECRET.replace('test@example.com', 'ops@example.com');
  const patched = await stack.request('PATCH', `/clusters/${cluster.id}`, {
    spec: { ...cluster.spec, pullSecret: { data: changed } },
  });
  assert.equal(patched.status, 200);
  await stack.publish({ id: cluster.id, generation: 2 });
  const status = await stack.waitForStatus(cluster.id, (s) => s.observed_generation === 2);
  assert.equal(conditionOf(status, 'Applied'), 'True/SecretUpdated');
  assert.equal(status.data?.secretVersion, '2');
});

test('preconditions not met: skipped and reported with the reason', async () => {
  const cluster = await stack.seedCluster({}, []);
  await stack.publish(cluster);
  const status = await stack.waitForStatus(
    cluster.id,
    (s) => conditionOf(s, 'Applied') === 'False/PreconditionNotMet',
  );
  assert.equal(conditionOf(status, 'Health'), 'True/Healthy');
  assert.equal(status.data?.precondition, 'validation-available');
  assert.match(status.conditions.find((c) => c.type === 'Applied')?.message ?? '', /validation adapter/);
});

test('invalid pull secret: failed status with a clear reason, adapter keeps going', async () => {
  const cluster = await stack.seedCluster({
    pullSecret: { data: '{"auths":{"quay.io":{"auth":"bm9jb2xvbg=="}}}' },
  });
  await stack.publish(cluster);
  const status = await stack.waitForStatus(
    cluster.id,
    (s) => conditionOf(s, 'Applied') === 'False/InvalidPullSecret',
  );
  assert.equal(conditionOf(status, 'Available'), 'False/SecretNotReady');
  assert.match(
    status.conditions.find((c) => c.type === 'Applied')?.message ?? '',
    /^invalid pull secret format: registry "quay.io": auth must decode to user:password$/,
  );
});

test('malformed events are rejected without a crash and counted', async () => {
  for (const body of [
    'not json',
    '{"specversion":"1.0"}',
    JSON.stringify({
      specversion: '1.0',
      id: 'x',
      source: 's',
      type: 'com.redhat.hyperfleet.cluster.reconcile',
      data: { id: '../../etc/passwd', generation: 1 },
    }),
  ]) {
    await stack.adapter.broker.publish(Buffer.from(body));
  }
  const deadline = Date.now() + 5000;
  while (
    !/pullsecret_events_total\{result="invalid"\} [3-9]/.test(await metric('pullsecret_events_total')) &&
    Date.now() < deadline
  )
    await sleep(20);
  assert.match(await metric('pullsecret_events_total'), /result="invalid"\} [3-9]/);
  assert.ok(stack.adapter.ready());
  const cluster = await stack.seedCluster();
  await stack.publish(cluster);
  await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
});

test('events about another kind of resource (a NodePool) are acknowledged and counted ignored, never reconciled', async () => {
  assert.match(await metric('pullsecret_events_total'), /result="ignored"\} 0/, 'pre-created');
  const invalid = async () => /result="invalid"\} (\d+)/.exec(await metric('pullsecret_events_total'))?.[1];
  const invalidBefore = await invalid();
  // The worst case: the node pool event names an existing cluster's id.
  const cluster = await stack.seedCluster();
  const nodePool = (type: string, n: number) => ({
    specversion: '1.0',
    id: `evt-nodepool-${n}`,
    source: 'hyperfleet-sentinel',
    type,
    datacontenttype: 'application/json',
    data: {
      id: cluster.id,
      kind: 'NodePool',
      href: `/api/hyperfleet/v1/clusters/${cluster.id}/nodepools/${cluster.id}`,
      generation: 1,
    },
  });
  // The Sentinel names the type after the kind in some releases (com.redhat.hyperfleet.{Kind}.reconcile).
  await stack.adapter.broker.publish(
    Buffer.from(JSON.stringify(nodePool('com.redhat.hyperfleet.cluster.reconcile', 1))),
  );
  await stack.adapter.broker.publish(
    Buffer.from(JSON.stringify(nodePool('com.redhat.hyperfleet.NodePool.reconcile', 2))),
  );
  await until('both counted ignored', async () =>
    /result="ignored"\} 2/.test(await metric('pullsecret_events_total')),
  );
  assert.deepEqual(stack.api.listStatuses(cluster.id), [], 'no status PUT');
  assert.ok(
    !(await readdir(join(stack.dir, 'store', 'secrets')).catch(() => [])).some((f) => f.includes(cluster.id)),
    'nothing stored',
  );
  assert.ok(
    stack.logs.some(
      (l) =>
        l.includes('Ignored an event about another kind of resource') &&
        l.includes('"event_kind":"NodePool"'),
    ),
  );
  assert.equal(await invalid(), invalidBefore, 'not dead-lettered as invalid either');
});

test('API 5xx then recovery: the event is retried until the status lands', async () => {
  const cluster = await stack.seedCluster();
  stack.api.injectFault({ route: 'putStatus', status: 503, times: 5 });
  await stack.publish(cluster);
  const status = await stack.waitForStatus(
    cluster.id,
    (s) => conditionOf(s, 'Available') === 'True/SecretAvailable',
  );
  assert.equal(status.data?.secretVersion, '1');
  stack.api.clearFaults();
});

test('deletion: Kubernetes Secret removed, cloud secret retained, Finalized=True, cluster removed', async () => {
  const cluster = await stack.seedCluster();
  await stack.publish(cluster);
  await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
  const manifest = join(stack.dir, 'manifests', `clusters-${cluster.id}`, `${cluster.id}-pull-secret.yaml`);
  await readFile(manifest);
  const deleted = await stack.request('DELETE', `/clusters/${cluster.id}`);
  assert.ok(
    deleted.status === 202 || deleted.status === 200 || deleted.status === 204,
    `DELETE answered ${deleted.status}`,
  );
  const after = stack.api.getCluster(cluster.id);
  assert.ok(after?.deleted_time);
  await stack.publish({ id: cluster.id, generation: after.generation });
  const deadline = Date.now() + 10_000;
  while (stack.api.getCluster(cluster.id) !== undefined && Date.now() < deadline) await sleep(20);
  assert.equal(
    stack.api.getCluster(cluster.id),
    undefined,
    'the API removed the cluster after Finalized=True',
  );
  await assert.rejects(readFile(manifest), { code: 'ENOENT' });
  assert.ok(
    (await readdir(join(stack.dir, 'store', 'secrets'))).some((f) => f.includes(cluster.id)),
    'cloud secret retained',
  );
});

test('health and metrics endpoints', async () => {
  assert.equal((await fetch(`http://127.0.0.1:${stack.adapter.healthPort}/healthz`)).status, 200);
  assert.equal((await fetch(`http://127.0.0.1:${stack.adapter.healthPort}/readyz`)).status, 200);
  const text = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
  for (const name of [
    'pullsecret_job_duration_seconds_bucket',
    'pullsecret_job_total{result="success"}',
    'pullsecret_gcp_api_calls_total{status_code="429"}',
    'pullsecret_events_total{result="applied"}',
    'pullsecret_event_processing_seconds_count',
  ]) {
    assert.ok(text.includes(name), `metrics lack ${name}`);
  }
});

test('canary: no credential in logs, metrics or status payloads', async () => {
  const cluster = await stack.seedCluster({ pullSecret: { data: CANARY_PULL_SECRET } });
  await stack.publish(cluster);
  await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
  const invalid = await stack.seedCluster({
    pullSecret: { data: CANARY_PULL_SECRET.replace('registry.redhat.io', 'not a registry') },
  });
  await stack.publish(invalid);
  await stack.waitForStatus(invalid.id, (s) => conditionOf(s, 'Applied') === 'False/InvalidPullSecret');
  const metrics = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
  const statuses = JSON.stringify([
    ...stack.api.listStatuses(cluster.id),
    ...stack.api.listStatuses(invalid.id),
  ]);
  assert.equal(findCanary(stack.logs.join('\n')), undefined, 'logs');
  assert.equal(findCanary(metrics), undefined, 'metrics');
  assert.equal(findCanary(statuses), undefined, 'status payloads');
});
