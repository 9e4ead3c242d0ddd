import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parse } from 'yaml';
import { Secret } from 'kubernetes-models/v1';
import { CoreV1Api, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { startDevStack, type DevStack } from '../../src/dev/stack.js';
import { createClusters, demoClusters } from '../../src/dev/demo-clusters.js';
import { pullSecretStatus } from '../../src/dev/settle.js';
import type { AdapterStatus, Cluster } from '../../src/hyperfleet/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { baseEnv, runCli } from '../support/cli.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';
import { startKubernetesTestServer } from '../servers/kubernetes/server.js';
import { until } from '../support/until.js';

// The whole stack end to end, as `pull-secret dev` runs it: API stand-in, Sentinel (polling over HTTP),
// embedded broker, adapter, local store, manifest directory. Clusters are created, changed and deleted
// through the API only; nothing publishes events but the Sentinel.

let dir: string;
let stack: DevStack;
const logs: string[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ps-dev-stack-'));
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  stack = await startDevStack({
    dataDir: join(dir, 'stack'),
    ports: { api: 0, health: 0, metrics: 0 },
    sentinel: { pollIntervalMs: 50, debounceMs: 1_000, maxAgeMs: 1_500 },
    logger: createLogger({ level: 'debug', destination: sink }),
  });
});
after(async () => {
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
});

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${stack.urls.apiBase}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

function condition(status: AdapterStatus | undefined, type: string): string | undefined {
  const c = status?.conditions.find((x) => x.type === type);
  return c === undefined ? undefined : `${c.status}/${c.reason ?? ''}`;
}

const statusWhen = (id: string, accept: (s: AdapterStatus) => boolean) => () => {
  const s = pullSecretStatus(stack.api, id);
  return s !== undefined && accept(s) ? s : undefined;
};

const manifestPath = (id: string) => join(stack.paths.manifests, `clusters-${id}`, `${id}-pull-secret.yaml`);
const decodedManifest = async (id: string) =>
  Buffer.from(
    (parse(await readFile(manifestPath(id), 'utf8')) as V1Secret).data?.['.dockerconfigjson'] ?? '',
    'base64',
  ).toString();

let cluster: Cluster;
const changed = VALID_PULL_SECRET.replace('test@example.com', 'ops@example.com');

test('create: a cluster POSTed to the API is stored, provisioned and reported', async () => {
  const response = await api('POST', '/clusters', {
    kind: 'Cluster',
    name: 'e2e-create',
    spec: { provider: 'gcp', gcp: { projectId: 'e2e-project' }, pullSecret: { data: VALID_PULL_SECRET } },
  });
  assert.equal(response.status, 201);
  cluster = (await response.json()) as Cluster;
  const status = await until(
    'Available=True',
    statusWhen(cluster.id, (s) => condition(s, 'Available') === 'True/SecretAvailable'),
  );
  assert.equal(condition(status, 'Applied'), 'True/SecretCreated');
  assert.equal(condition(status, 'Health'), 'True/Healthy');
  assert.equal(status.observed_generation, 1);
  assert.equal(status.data?.secretVersion, '1');
  new Secret(
    parse(await readFile(manifestPath(cluster.id), 'utf8')) as ConstructorParameters<typeof Secret>[0],
  ).validate();
  assert.equal(await decodedManifest(cluster.id), VALID_PULL_SECRET);
  const conditions = stack.api.getCluster(cluster.id)?.status.conditions ?? [];
  for (const type of [
    'Reconciled',
    'PullsecretSuccessful',
    'ValidationSuccessful',
    'DnsSuccessful',
    'PlacementSuccessful',
  ]) {
    assert.equal(conditions.find((c) => c.type === type)?.status, 'True', type);
  }
  assert.deepEqual(stack.api.violations, []);
});

test('update: a new generation with changed data makes a new version', async () => {
  const patched = await api('PATCH', `/clusters/${cluster.id}`, {
    spec: { ...cluster.spec, pullSecret: { data: changed } },
  });
  assert.equal(patched.status, 200);
  assert.equal(((await patched.json()) as Cluster).generation, 2);
  const status = await until(
    'generation 2 reported',
    statusWhen(cluster.id, (s) => s.observed_generation === 2),
  );
  // The Sentinel resends after its short max age, so on a busy machine a resync's report
  // (SecretUpToDate) can replace the update's before it is read: the reconcile's log line says what
  // the update did.
  const executed = logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.cluster_id === cluster.id && l.operation === 'execute');
  assert.ok(
    executed.some((l) => l.outcome === 'updated'),
    `an update was logged: ${JSON.stringify(executed)}`,
  );
  assert.match(condition(status, 'Applied') ?? '', /^True\/Secret(Updated|UpToDate)$/);
  assert.equal(status.data?.secretVersion, '2');
  assert.equal(await decodedManifest(cluster.id), changed);
});

test('no-op resync: the Sentinel sends the reconciled cluster again after its max age; no new version', async () => {
  const before = pullSecretStatus(stack.api, cluster.id);
  const manifestTime = (await stat(manifestPath(cluster.id))).mtimeMs;
  const status = await until(
    'a resync report',
    statusWhen(
      cluster.id,
      (s) =>
        s.last_report_time !== before?.last_report_time && condition(s, 'Applied') === 'True/SecretUpToDate',
    ),
  );
  assert.equal(status.observed_generation, 2);
  assert.equal(status.data?.secretVersion, '2');
  assert.equal(
    (await stat(manifestPath(cluster.id))).mtimeMs,
    manifestTime,
    'the manifest was not rewritten',
  );
  assert.ok(
    logs.some((l) => l.includes('"reason":"max-age"') && l.includes(cluster.id)),
    'the Sentinel logged a max-age event',
  );
});

test('delete: Finalized=True, the Secret manifest is gone and the API removes the cluster', async () => {
  const deleted = await api('DELETE', `/clusters/${cluster.id}`);
  assert.equal(deleted.status, 202);
  await until('the cluster to be removed', () =>
    stack.api.getCluster(cluster.id) === undefined ? true : undefined,
  );
  assert.equal((await api('GET', `/clusters/${cluster.id}`)).status, 404);
  await assert.rejects(readFile(manifestPath(cluster.id)), { code: 'ENOENT' });
  const finalize = logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.cluster_id === cluster.id && l.operation === 'finalize');
  assert.equal(finalize.at(-1)?.outcome, 'finalized');
  assert.ok(
    (await readdir(join(stack.paths.store, 'secrets'))).some((f) => f.includes(cluster.id)),
    'the cloud secret is retained by default',
  );
});

test('status: table and JSON from the stand-in, failures and skips explained', async () => {
  const created = await createClusters(stack.urls.apiBase, demoClusters(1));
  await until('every status', () =>
    created.every((c) => pullSecretStatus(stack.api, c.id) !== undefined) ? true : undefined,
  );
  const table = await runCli(['status', '--api', stack.urls.api], baseEnv());
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^CLUSTER +GEN +APPLIED +AVAILABLE +HEALTH +VERSION +KUBERNETES SECRET$/m);
  assert.match(
    table.stdout,
    /^demo-gcp-1 +1 +True (?:SecretCreated|SecretUpToDate) +True SecretAvailable +True Healthy +1 +clusters-…/m,
  );
  assert.match(
    table.stdout,
    /demo-invalid-pull-secret +invalid pull secret format: registry "quay.io": auth must decode to user:password/,
  );
  assert.match(table.stdout, /demo-waiting-for-dns +Skipped: the dns adapter has not succeeded yet/);

  const json = await runCli(['status', '--api', stack.urls.api, '--output', 'json'], baseEnv());
  assert.equal(json.code, 0, json.stderr);
  const rows = (
    JSON.parse(json.stdout) as {
      clusters: Array<{
        id: string;
        name: string;
        report?: { secretVersion?: string; applied?: { reason?: string } };
      }>;
    }
  ).clusters;
  assert.deepEqual(rows.map((r) => r.name).sort(), [
    'demo-gcp-1',
    'demo-invalid-pull-secret',
    'demo-waiting-for-dns',
  ]);
  assert.equal(rows.find((r) => r.name === 'demo-gcp-1')?.report?.secretVersion, '1');
  assert.equal(
    rows.find((r) => r.name === 'demo-invalid-pull-secret')?.report?.applied?.reason,
    'InvalidPullSecret',
  );

  const nowhere = await runCli(['status', '--api', 'http://127.0.0.1:9'], baseEnv());
  assert.equal(nowhere.code, 1);
  assert.match(nowhere.stderr, /cannot reach the HyperFleet API at http:\/\/127\.0\.0\.1:9/);
  assert.equal((await runCli(['status', '--output', 'xml'], baseEnv())).code, 2);
  const noCa = await runCli(
    ['status', '--api', 'https://127.0.0.1:9', '--ca-file', 'no-such-ca.pem'],
    baseEnv(),
  );
  assert.equal(noCa.code, 2);
  assert.match(noCa.stderr, /cannot read the HyperFleet API CA file "no-such-ca\.pem": ENOENT/);
  const caForHttp = await runCli(
    ['status', '--api', stack.urls.api, '--ca-file', 'no-such-ca.pem'],
    baseEnv(),
  );
  assert.equal(caForHttp.code, 2);
  assert.match(caForHttp.stderr, /CA file is set, but http:.* is not an https URL/);
});

test('npm start demo: exits 0 with the summary table, and its manifests are accepted by the Kubernetes API', async () => {
  const dataDir = join(dir, 'demo');
  const demo = await runCli(['dev', '--demo', '--exit-when-settled', '--data-dir', dataDir], baseEnv());
  assert.equal(demo.code, 0, demo.stderr);
  const out = demo.stdout;
  assert.match(out, /^Summary after [\d.]+ s: 6 clusters: 4 provisioned, 1 failed, 1 skipped$/m);
  // The ownership transfer through the account-service stand-in: registry names only.
  assert.match(
    out,
    /^Ownership transfer demo-transfer-1 \(demo-transfer, store version 2\): cloud\.openshift\.com kept, quay\.io replaced by the new owner's, registry\.redhat\.io kept$/m,
  );
  assert.match(
    out,
    /^demo-transfer +1 +True SecretUpdated +True SecretAvailable +True Healthy +2 +clusters-…/m,
  );
  for (const fake of [
    'new-owner:demo-only-5w1z',
    'old-owner:demo-only-2x9q',
    'demo-cluster:demo-cloud-token-4n8p',
  ]) {
    assert.ok(
      !out.includes(Buffer.from(fake).toString('base64')) && !out.includes(fake),
      'no transfer credential in the output',
    );
  }
  assert.match(
    out,
    /^demo-gcp-1 +1 +True SecretCreated +True SecretAvailable +True Healthy +1 +clusters-…[0-9a-f]{8}\/…[0-9a-f]{8}-pull-secret$/m,
  );
  assert.match(
    out,
    /^demo-invalid-pull-secret +1 +False InvalidPullSecret +False SecretNotReady +True Healthy +- +-$/m,
  );
  assert.match(
    out,
    /^demo-waiting-for-dns +1 +False PreconditionNotMet +Unknown PreconditionNotMet +True Healthy +- +-$/m,
  );
  assert.match(
    out,
    /^ {2}demo-invalid-pull-secret {2}invalid pull secret format: registry "quay.io": auth must decode to user:password$/m,
  );
  assert.match(
    out,
    /^ {2}demo-waiting-for-dns {6}Skipped: the dns adapter has not succeeded yet \(DnsSuccessful is not True\)$/m,
  );
  assert.match(out, /Where the data is:/);
  assert.ok(
    out.includes(`node dist/cli/main.js dev --data-dir ${dataDir}\n`),
    'how to keep the stack running on the demo data',
  );
  assert.match(out, /node dist\/cli\/main\.js status --api http:\/\/127\.0\.0\.1:8000/);
  assert.match(
    demo.stderr,
    /^Clusters with a status {2}6\/6 {2}100%/m,
    'progress as plain lines off a terminal',
  );
  assert.ok(
    !out.includes(Buffer.from('demo-user:demo-only-7f3k').toString('base64')),
    'no credential in the output',
  );

  const manifests = join(dataDir, 'manifests');
  const namespace = (await readdir(manifests))[0] ?? '';
  const file = join(manifests, namespace, (await readdir(join(manifests, namespace)))[0] ?? '');
  const manifest = parse(await readFile(file, 'utf8')) as V1Secret;
  new Secret(manifest as ConstructorParameters<typeof Secret>[0]).validate();
  const kube = await startKubernetesTestServer({ namespaces: ['demo-apply'] });
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(kube.kubeconfigPath);
    const created = await kc.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: 'demo-apply',
      body: { ...manifest, metadata: { ...manifest.metadata, namespace: 'demo-apply' } },
    });
    assert.equal(created.type, 'kubernetes.io/dockerconfigjson');
    assert.ok(created.metadata?.uid);
  } finally {
    await kube.close();
  }
});
