import { test, before, after, beforeEach, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { baseEnv, finalLine, runCli } from '../support/cli.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';

// The job through the CLI, against the GCP Secret Manager test server, through the real SDK.

const PROJECT = 'customer-prod-12345';
let server: SecretManagerTestServer;
let n = 0;
let cluster: string;

before(async () => (server = await startSecretManagerTestServer({ project: PROJECT })));
after(async () => server.stop());
beforeEach(() => {
  cluster = `cls-gcp-${++n}`;
  server.resetCalls();
  server.clearFaults();
});

function env(extra: Record<string, string> = {}) {
  return baseEnv({
    SECRET_STORE: 'gcp',
    GCP_PROJECT_ID: PROJECT,
    SECRET_MANAGER_ENDPOINT: server.address,
    SECRET_MANAGER_INSECURE: 'true',
    CLUSTER_ID: cluster,
    PULL_SECRET_DATA: VALID_PULL_SECRET,
    ...extra,
  });
}
const versions = () =>
  server.state
    .versionsOf(`hyperfleet-${cluster}-pull-secret`)
    .map((v) => v.number)
    .reverse();

test('first run: at most 4 calls; no-op run: one access; labels and automatic replication set', async () => {
  const first = await runCli(['run-job', 'pull-secret'], env());
  assert.equal(first.code, 0, first.stderr);
  assert.equal(finalLine(first)?.outcome, 'created');
  assert.equal(finalLine(first)?.gcp_project, PROJECT);
  assert.ok(server.totalCalls <= 4, `first run made ${server.totalCalls} calls`);
  assert.equal(server.calls.AddSecretVersion, 1);
  const secret = server.state.findSecret(`hyperfleet-${cluster}-pull-secret`);
  assert.equal(secret?.labels['managed-by'], 'hyperfleet');
  assert.equal(secret?.labels['cluster-id'], cluster);
  assert.ok(secret?.replication.automatic !== undefined && secret.replication.automatic !== null);

  server.resetCalls();
  const second = await runCli(['run-job', 'pull-secret'], env());
  assert.equal(second.code, 0, second.stderr);
  assert.equal(finalLine(second)?.outcome, 'unchanged');
  // Nothing to change: one AccessSecretVersion (its own quota), no GetSecret (the 600/min read quota).
  assert.deepEqual(
    server.callLog.map((c) => `${c.method} ${c.resource} ${c.code}`),
    [`AccessSecretVersion projects/${PROJECT}/secrets/hyperfleet-${cluster}-pull-secret/versions/latest OK`],
  );
  assert.deepEqual(versions(), [1]);

  const changed = await runCli(
    ['run-job', 'pull-secret'],
    env({ PULL_SECRET_DATA: VALID_PULL_SECRET.replace('quay.io', 'quay.io/myorg') }),
  );
  assert.equal(changed.code, 0, changed.stderr);
  assert.equal(finalLine(changed)?.outcome, 'updated');
  assert.match(
    String(finalLine(changed)?.version),
    new RegExp(`projects/${PROJECT}/secrets/hyperfleet-${cluster}-pull-secret/versions/2$`),
  );
  assert.deepEqual(versions(), [1, 2]);

  const inspect = await runCli(['inspect', '--cluster-id', cluster], env());
  assert.equal(inspect.code, 0, inspect.stderr);
  assert.equal((JSON.parse(inspect.stdout) as { version_count: number }).version_count, 2);
});

for (const code of [
  status.UNAVAILABLE,
  status.RESOURCE_EXHAUSTED,
  status.DEADLINE_EXCEEDED,
  status.INTERNAL,
]) {
  test(`transient ${status[code]} on every step ends in success without duplicate versions`, async () => {
    // The steps of a first run (a no-op reads no metadata, so GetSecret is not one of them).
    for (const method of ['CreateSecret', 'AddSecretVersion', 'AccessSecretVersion'] as const) {
      server.injectFault({ method, code });
    }
    server.injectFault({ method: 'AddSecretVersion', code, afterApply: true });
    const result = await runCli(['run-job', 'pull-secret'], env());
    assert.equal(result.code, 0, result.stderr);
    assert.equal(finalLine(result)?.outcome, 'created');
    assert.deepEqual(versions(), [1]);
    assert.ok(
      result.logs.some((l) => l.message === 'Retrying after a transient error' && l.level === 'warn'),
    );
    assert.equal(server.pendingFaults, 0, 'every injected fault was hit');
  });
}

test('permanent faults fail at once with a clear message and exit 1', async () => {
  server.injectFault({ method: 'AccessSecretVersion', code: status.PERMISSION_DENIED });
  const denied = await runCli(['run-job', 'pull-secret'], env());
  assert.equal(denied.code, 1);
  assert.match(denied.stderr, /PERMISSION_DENIED/);
  assert.match(denied.stderr, /secretmanager\.versions\.access/);
  assert.equal(server.totalCalls, 1);
  assert.equal(finalLine(denied)?.operation, 'failed');
  assert.equal(finalLine(denied)?.error_code, 'STORE_PERMISSION_DENIED');

  server.resetCalls();
  server.injectFault({ method: 'AccessSecretVersion', code: status.UNAUTHENTICATED });
  const unauthenticated = await runCli(['run-job', 'pull-secret'], env());
  assert.equal(unauthenticated.code, 1);
  assert.match(unauthenticated.stderr, /UNAUTHENTICATED/);
  assert.equal(server.totalCalls, 1);
});

test('retries are bounded: a store that stays down fails with exit 1', async () => {
  server.injectFault({ method: 'AccessSecretVersion', code: status.UNAVAILABLE, times: Infinity });
  const result = await runCli(['run-job', 'pull-secret'], env({ RETRY_MAX_ATTEMPTS: '3' }));
  assert.equal(result.code, 1);
  assert.equal(server.calls.AccessSecretVersion, 3);
  assert.match(result.stderr, /UNAVAILABLE/);
});

test('an existing secret without managed-by=hyperfleet is refused with exit 1, untouched', async () => {
  server.state.seedSecret(`hyperfleet-${cluster}-pull-secret`, {
    labels: { team: 'payments' },
    versions: [{ data: 'theirs' }],
  });
  const result = await runCli(['run-job', 'pull-secret'], env());
  assert.equal(result.code, 1);
  assert.match(result.stderr, /not managed by HyperFleet/);
  assert.equal(server.calls.AddSecretVersion, 0);
});

test('an unmanaged secret already holding exactly our pull secret: a no-op, untouched; the Kubernetes Secret is ours', async () => {
  const secretId = `hyperfleet-${cluster}-pull-secret`;
  server.state.seedSecret(secretId, {
    labels: { team: 'payments' },
    versions: [{ data: VALID_PULL_SECRET }],
  });
  const manifests = await mkdtemp(join(tmpdir(), 'ps-job-gcp-'));
  try {
    const result = await runCli(
      ['run-job', 'pull-secret'],
      env({ KUBERNETES_TARGET: 'manifests', MANIFEST_DIR: manifests }),
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(finalLine(result)?.outcome, 'unchanged');
    assert.deepEqual(
      Object.keys(server.calls).filter((m) => server.calls[m as keyof typeof server.calls] > 0),
      ['AccessSecretVersion'],
    );
    assert.deepEqual(server.state.findSecret(secretId)?.labels, { team: 'payments' });
    assert.deepEqual(versions(), [1]);
    const manifest = await readFile(
      join(manifests, `clusters-${cluster}`, `${cluster}-pull-secret.yaml`),
      'utf8',
    );
    assert.match(manifest, /managed-by: hyperfleet/);
    assert.match(manifest, new RegExp(`cluster-id: ${cluster}`));
    assert.doesNotMatch(manifest, /payments/);
    assert.ok(manifest.includes(Buffer.from(VALID_PULL_SECRET).toString('base64')));
  } finally {
    await rm(manifests, { recursive: true, force: true });
  }
});

test('an oversized pull secret is refused before any call, exit 2', async () => {
  const big = JSON.stringify({
    auths: { 'quay.io': { auth: Buffer.from('u:p').toString('base64'), pad: 'x'.repeat(66_000) } },
  });
  const result = await runCli(['run-job', 'pull-secret'], env({ PULL_SECRET_DATA: big }));
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    /invalid pull secret format: \d+ bytes exceeds the gcp store limit of 65536 bytes/,
  );
  assert.equal(server.totalCalls, 0);
});

test('insecure endpoints are refused off loopback (configuration error, exit 2)', async () => {
  const result = await runCli(
    ['run-job', 'pull-secret'],
    env({ SECRET_MANAGER_ENDPOINT: 'secretmanager.example.com:443' }),
  );
  assert.equal(result.code, 2);
  assert.match(result.stderr, /SECRET_MANAGER_INSECURE/);
});

describe("drop-in for the upstream job: the chart's exact environment", () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'ps-upstream-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  /**
   * The upstream chart's Job environment (no SECRET_STORE), plus the two variables that point the
   * real SDK at the test server; only RESULTS_PATH moves to a temporary directory.
   */
  function upstreamEnv(resultsPath: string, extra: Record<string, string> = {}) {
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      METADATA_SERVER_DETECTION: 'none',
      GCP_PROJECT_ID: PROJECT,
      CLUSTER_ID: cluster,
      SECRET_NAME: `hyperfleet-${cluster}-pull-secret`,
      PULL_SECRET_DATA: VALID_PULL_SECRET,
      RESULTS_PATH: resultsPath,
      LOG_LEVEL: 'info',
      SECRET_MANAGER_ENDPOINT: server.address,
      SECRET_MANAGER_INSECURE: 'true',
      ...extra,
    };
  }

  test("stores the secret in Secret Manager and writes the sidecar's result file", async () => {
    const resultsPath = join(dir, 'adapter-result.json');
    const result = await runCli(['run-job', 'pull-secret'], upstreamEnv(resultsPath));
    assert.equal(result.code, 0, result.stderr);
    assert.equal(finalLine(result)?.gcp_project, PROJECT);
    assert.equal(server.calls.AddSecretVersion, 1);
    assert.deepEqual(versions(), [1]);
    const file = JSON.parse(await readFile(resultsPath, 'utf8')) as Record<string, unknown>;
    assert.equal(file.status, 'success');
    assert.equal(file.reason, 'SecretCreated');
    assert.ok(typeof file.message === 'string' && file.message.length <= 1024);
    assert.match(String(file.secret_path), new RegExp(`^projects/${PROJECT}/secrets/`));
  });

  test('SECRET_STORE=local next to GCP_PROJECT_ID is refused before any call: exit 2, one line, a failure result file', async () => {
    const resultsPath = join(dir, 'refused.json');
    const result = await runCli(
      ['run-job', 'pull-secret'],
      upstreamEnv(resultsPath, { SECRET_STORE: 'local' }),
    );
    assert.equal(result.code, 2);
    assert.match(result.stderr, /SECRET_STORE: local contradicts GCP_PROJECT_ID/);
    assert.equal(server.totalCalls, 0);
    const file = JSON.parse(await readFile(resultsPath, 'utf8')) as Record<string, unknown>;
    assert.deepEqual([file.status, file.reason], ['failure', 'InvalidConfiguration']);
  });
});
