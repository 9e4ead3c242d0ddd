import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseEnv, finalLine, runCli } from '../support/cli.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';
import { CAN_SWITCH_UID, readAs, STATUS_REPORTER_UID } from '../support/read-as.js';

// The pull secret job end to end through the CLI on the embedded local store.

const CLUSTER = '019466a0-8f8e-7abc-9def-0123456789ab';
let dir: string;
before(async () => (dir = await mkdtemp(join(tmpdir(), 'ps-job-local-'))));
after(async () => rm(dir, { recursive: true, force: true }));

function env(storeDir: string, extra: Record<string, string> = {}) {
  return baseEnv({
    LOCAL_STORE_DIR: storeDir,
    CLUSTER_ID: CLUSTER,
    PULL_SECRET_DATA: VALID_PULL_SECRET,
    ...extra,
  });
}

test('missing variables are all listed at once, exit 2, and the store is never touched', async () => {
  const storeDir = join(dir, 'missing');
  const result = await runCli(['run-job', 'pull-secret'], baseEnv({ LOCAL_STORE_DIR: storeDir }));
  assert.equal(result.code, 2);
  assert.match(result.stderr, /missing required environment variable: CLUSTER_ID/);
  assert.match(result.stderr, /missing required environment variable: PULL_SECRET_DATA/);
  await assert.rejects(readdir(storeDir), { code: 'ENOENT' });

  const gcp = await runCli(['run-job', 'pull-secret'], baseEnv({ SECRET_STORE: 'gcp', CLUSTER_ID: CLUSTER }));
  assert.equal(gcp.code, 2);
  assert.match(gcp.stderr, /missing required environment variable: PULL_SECRET_DATA/);
  assert.match(gcp.stderr, /missing required environment variable: GCP_PROJECT_ID/);
});

test('same data twice makes one version; changed data a second; inspect shows both', async () => {
  const storeDir = join(dir, 'idempotent');
  const first = await runCli(['run-job', 'pull-secret'], env(storeDir));
  assert.equal(first.code, 0, first.stderr);
  assert.equal(finalLine(first)?.outcome, 'created');
  assert.equal(finalLine(first)?.cluster_id, CLUSTER);

  const reformatted = JSON.stringify(JSON.parse(VALID_PULL_SECRET), null, 2);
  for (const data of [VALID_PULL_SECRET, reformatted]) {
    const again = await runCli(['run-job', 'pull-secret'], env(storeDir, { PULL_SECRET_DATA: data }));
    assert.equal(again.code, 0, again.stderr);
    assert.equal(finalLine(again)?.outcome, 'unchanged');
  }

  const changed = VALID_PULL_SECRET.replace('test@example.com', 'ops@example.com');
  const third = await runCli(['run-job', 'pull-secret'], env(storeDir, { PULL_SECRET_DATA: changed }));
  assert.equal(third.code, 0, third.stderr);
  assert.equal(finalLine(third)?.outcome, 'updated');

  const inspect = await runCli(['inspect', '--cluster-id', CLUSTER], env(storeDir));
  assert.equal(inspect.code, 0, inspect.stderr);
  const view = JSON.parse(inspect.stdout) as {
    name: string;
    version_count: number;
    latest_version: string;
    labels: Record<string, string>;
  };
  assert.equal(view.name, `hyperfleet-${CLUSTER}-pull-secret`);
  assert.equal(view.version_count, 2);
  assert.equal(view.latest_version, '2');
  assert.deepEqual(view.labels, {
    'managed-by': 'hyperfleet',
    adapter: 'pullsecret',
    'cluster-id': CLUSTER,
    'resource-type': 'pull-secret',
    'hyperfleet-version': 'v1',
  });
});

test('log lines carry the upstream fields', async () => {
  const result = await runCli(['run-job', 'pull-secret'], env(join(dir, 'fields')));
  assert.equal(result.code, 0, result.stderr);
  assert.ok(result.logs.length >= 3);
  for (const line of result.logs) {
    assert.match(String(line.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(line.cluster_id, CLUSTER);
    assert.equal(typeof line.operation, 'string');
    assert.equal(typeof line.message, 'string');
    assert.ok(['info', 'warn', 'error'].includes(String(line.level)));
  }
  const done = finalLine(result);
  assert.equal(typeof done?.duration_ms, 'number');
  assert.match(String(done?.version), /versions\/1$/);
});

test('--dry-run validates and writes nothing', async () => {
  const storeDir = join(dir, 'dry');
  const dry = await runCli(['run-job', 'pull-secret', '--dry-run'], env(storeDir));
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(finalLine(dry)?.outcome, 'created');
  assert.equal(finalLine(dry)?.dry_run, true);
  const inspect = await runCli(['inspect', '--cluster-id', CLUSTER], env(storeDir));
  assert.equal(inspect.code, 1);
  assert.match(inspect.stderr, /not found/);
});

test('invalid input fails with exit 2 before any store call', async () => {
  const storeDir = join(dir, 'invalid');
  const bad = await runCli(['run-job', 'pull-secret'], env(storeDir, { PULL_SECRET_DATA: '{"auths":{}}' }));
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^pull-secret: invalid pull secret format: "auths" is empty$/m);
  const hostile = await runCli(['run-job', 'pull-secret'], env(storeDir, { CLUSTER_ID: '../../etc' }));
  assert.equal(hostile.code, 2);
  assert.match(hostile.stderr, /invalid cluster id/);
  const name = await runCli(['run-job', 'pull-secret'], env(storeDir, { SECRET_NAME: 'has spaces' }));
  assert.equal(name.code, 2);
  assert.match(name.stderr, /invalid secret name/);
  await assert.rejects(readdir(join(storeDir, 'secrets')), { code: 'ENOENT' });
});

test('RESULTS_PATH receives the outcome for a status reporter', async () => {
  const storeDir = join(dir, 'results');
  const resultsPath = join(dir, 'result.json');
  const ok = await runCli(['run-job', 'pull-secret'], env(storeDir, { RESULTS_PATH: resultsPath }));
  assert.equal(ok.code, 0, ok.stderr);
  const success = JSON.parse(await readFile(resultsPath, 'utf8')) as Record<string, unknown>;
  assert.equal(success.status, 'success');
  assert.equal(success.reason, 'SecretCreated');
  assert.equal(success.version, '1');
  assert.equal(success.secret_name, `hyperfleet-${CLUSTER}-pull-secret`);

  const failed = await runCli(
    ['run-job', 'pull-secret'],
    env(storeDir, { RESULTS_PATH: resultsPath, PULL_SECRET_DATA: 'nope' }),
  );
  assert.equal(failed.code, 2);
  const failure = JSON.parse(await readFile(resultsPath, 'utf8')) as Record<string, unknown>;
  assert.equal(failure.status, 'failure');
  assert.equal(failure.reason, 'InvalidPullSecret');
  assert.match(String(failure.message), /^invalid pull secret format: not valid JSON/);
});

test(
  'the status-reporter sidecar, running as its own non-root UID, reads the result of a success and of a failure',
  { skip: !CAN_SWITCH_UID && 'needs root to start a reader as another UID' },
  async () => {
    // Like the pod's `/results` emptyDir: a directory every UID may traverse.
    const results = join(dir, 'shared-results');
    await mkdir(results);
    await chmod(dir, 0o755);
    await chmod(results, 0o777);
    const resultsPath = join(results, 'adapter-result.json');
    const ok = await runCli(
      ['run-job', 'pull-secret'],
      env(join(dir, 'sidecar-store'), { RESULTS_PATH: resultsPath }),
    );
    assert.equal(ok.code, 0, ok.stderr);
    const success = await readAs(STATUS_REPORTER_UID, resultsPath);
    assert.equal(
      (JSON.parse(success.startsWith('ERROR') ? '{}' : success) as { status?: string }).status,
      'success',
      success,
    );
    const failed = await runCli(
      ['run-job', 'pull-secret'],
      env(join(dir, 'sidecar-store'), { RESULTS_PATH: resultsPath, PULL_SECRET_DATA: 'nope' }),
    );
    assert.equal(failed.code, 2);
    const failure = await readAs(STATUS_REPORTER_UID, resultsPath);
    assert.equal(
      (JSON.parse(failure.startsWith('ERROR') ? '{}' : failure) as { reason?: string }).reason,
      'InvalidPullSecret',
      failure,
    );
  },
);

test('usage errors exit 2; --help and --version exit 0', async () => {
  const unknownJob = await runCli(['run-job', 'nope'], baseEnv());
  assert.equal(unknownJob.code, 2);
  assert.match(unknownJob.stderr, /unknown job "nope"/);
  const unknownCommand = await runCli(['frobnicate'], baseEnv());
  assert.equal(unknownCommand.code, 2);
  const help = await runCli(['run-job', '--help'], baseEnv());
  assert.equal(help.code, 0);
  assert.match(help.stdout, /PULL_SECRET_DATA/);
  assert.match(help.stdout, /GCP_PROJECT_ID/);
  const version = await runCli(['--version'], baseEnv());
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^\d+\.\d+\.\d+/);
});

test('inspect says where it looked when the secret is not found', async () => {
  const storeDir = join(dir, 'empty-store');
  const result = await runCli(['inspect', '--cluster-id', CLUSTER], baseEnv({ LOCAL_STORE_DIR: storeDir }));
  assert.equal(result.code, 1);
  assert.match(
    result.stderr,
    new RegExp(
      `secret hyperfleet-${CLUSTER}-pull-secret not found in the local encrypted store at ${storeDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
    ),
  );
});
