import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { Secret } from 'kubernetes-models/v1';
import { CoreV1Api, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { baseEnv, finalLine, runCli } from '../support/cli.js';
import { CANARY_PULL_SECRET, findCanary, VALID_PULL_SECRET } from '../support/fixtures.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';

// The job's Kubernetes step: after the store step, the cluster's dockerconfigjson Secret is written
// to a manifest directory (embedded default) or through the real client to an API server.

const CLUSTER = '019466a0-8f8e-7abc-9def-0123456789ab';
const NAMESPACE = `clusters-${CLUSTER}`;
const NAME = `${CLUSTER}-pull-secret`;
let dir: string;
let kube: KubernetesTestServer;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ps-job-kube-'));
  kube = await startKubernetesTestServer({ namespaces: [NAMESPACE] });
});
after(async () => {
  await kube.close();
  await rm(dir, { recursive: true, force: true });
});

function decoded(secret: { data?: Record<string, string> }): string {
  return Buffer.from(secret.data?.['.dockerconfigjson'] ?? '', 'base64').toString();
}

test('manifests target: file written once, untouched on a no-op, updated on change', async () => {
  const env = baseEnv({
    CLUSTER_ID: CLUSTER,
    PULL_SECRET_DATA: VALID_PULL_SECRET,
    LOCAL_STORE_DIR: join(dir, 'm-store'),
    KUBERNETES_TARGET: 'manifests',
    MANIFEST_DIR: join(dir, 'manifests'),
  });
  const file = join(dir, 'manifests', NAMESPACE, `${NAME}.yaml`);
  const first = await runCli(['run-job', 'pull-secret'], env);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(finalLine(first)?.kubernetes_outcome, 'created');
  const before = await stat(file);
  assert.equal(before.mode & 0o777, 0o600);
  const manifest = parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  new Secret(manifest).validate();
  assert.equal(decoded(manifest as { data?: Record<string, string> }), VALID_PULL_SECRET);

  const again = await runCli(['run-job', 'pull-secret'], env);
  assert.equal(finalLine(again)?.kubernetes_outcome, 'unchanged');
  assert.equal((await stat(file)).mtimeMs, before.mtimeMs);

  const changed = VALID_PULL_SECRET.replace('test@example.com', 'ops@example.com');
  const third = await runCli(['run-job', 'pull-secret'], { ...env, PULL_SECRET_DATA: changed });
  assert.equal(finalLine(third)?.kubernetes_outcome, 'updated');
  assert.equal(decoded(parse(await readFile(file, 'utf8')) as { data?: Record<string, string> }), changed);
});

test('api target: the Secret is created through the real client, then left alone on a no-op', async () => {
  const env = baseEnv({
    CLUSTER_ID: CLUSTER,
    PULL_SECRET_DATA: VALID_PULL_SECRET,
    LOCAL_STORE_DIR: join(dir, 'a-store'),
    MANAGEMENT_NAMESPACE: NAMESPACE,
    KUBECONFIG: kube.kubeconfigPath,
  });
  const first = await runCli(['run-job', 'pull-secret'], env);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(finalLine(first)?.kubernetes_outcome, 'created');
  const secret = kube.getObject('secrets', NAMESPACE, NAME) as {
    type?: string;
    data?: Record<string, string>;
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  };
  assert.equal(secret.type, 'kubernetes.io/dockerconfigjson');
  assert.equal(decoded(secret), VALID_PULL_SECRET);
  assert.equal(secret.metadata?.labels?.['managed-by'], 'hyperfleet');
  assert.equal(secret.metadata?.annotations?.['hyperfleet.io/secret-version'], '1');

  kube.resetCalls();
  const again = await runCli(['run-job', 'pull-secret'], env);
  assert.equal(finalLine(again)?.kubernetes_outcome, 'unchanged');
  assert.equal(kube.writes('secrets'), 0);
});

test('api target: a missing namespace fails clearly (exit 1), the store step already done', async () => {
  const env = baseEnv({
    CLUSTER_ID: 'cls-no-namespace',
    PULL_SECRET_DATA: CANARY_PULL_SECRET,
    LOCAL_STORE_DIR: join(dir, 'n-store'),
    KUBERNETES_TARGET: 'api',
    KUBECONFIG: kube.kubeconfigPath,
    RESULTS_PATH: join(dir, 'n-result.json'),
  });
  const result = await runCli(['run-job', 'pull-secret'], env);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /namespace "clusters-cls-no-namespace" does not exist/);
  const resultFile = await readFile(join(dir, 'n-result.json'), 'utf8');
  assert.equal((JSON.parse(resultFile) as { reason: string }).reason, 'NamespaceNotFound');
  assert.equal(findCanary(result.stdout + result.stderr + resultFile), undefined);
});

test('the README main command writes a manifest the Kubernetes API accepts', async () => {
  const demo = join(dir, 'demo');
  const env = {
    ...baseEnv(),
    PULL_SECRET_CLI: `${process.execPath} --import tsx src/cli/main.ts`,
    LOCAL_STORE_DIR: join(demo, 'store'),
    MANIFEST_DIR: join(demo, 'manifests'),
    RESULTS_PATH: join(demo, 'result.json'),
  };
  const { stdout } = await promisify(execFile)('bash', ['scripts/demo-job.sh'], {
    env,
    cwd: new URL('../..', import.meta.url).pathname,
    timeout: 60_000,
  });
  assert.match(stdout, /secret store: created, Kubernetes Secret: created/);
  assert.match(stdout, /secret store: unchanged, Kubernetes Secret: unchanged/);
  assert.match(stdout, /secret store: updated, Kubernetes Secret: updated/);
  const manifest = parse(
    await readFile(join(demo, 'manifests', NAMESPACE, `${NAME}.yaml`), 'utf8'),
  ) as V1Secret;
  new Secret(manifest as ConstructorParameters<typeof Secret>[0]).validate();

  const kc = new KubeConfig();
  kc.loadFromFile(kube.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = 'demo-apply';
  kube.createNamespace(namespace);
  const created = await core.createNamespacedSecret({
    namespace,
    body: { ...manifest, metadata: { ...manifest.metadata, namespace } },
  });
  assert.equal(created.type, 'kubernetes.io/dockerconfigjson');
  assert.ok(created.metadata?.uid);
});
