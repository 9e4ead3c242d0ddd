// `pull-secret preflight` end to end: the real CLI (through tsx) and the real Secret Manager client
// against the gRPC test server on loopback, plaintext, no Google credentials.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { status } from '@grpc/grpc-js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import { baseEnv, runCli, type CliResult } from '../support/cli.js';

const PROJECT = 'test-project';
const SA = `pullsecret-manager@${PROJECT}.iam.gserviceaccount.com`;
const ALL = [
  'secretmanager.secrets.create',
  'secretmanager.secrets.get',
  'secretmanager.versions.add',
  'secretmanager.versions.access',
];
const PROBE = `projects/${PROJECT}/secrets/hyperfleet-preflight-probe`;

let server: SecretManagerTestServer;

function preflight(
  args: string[],
  extra: Record<string, string | undefined> = {},
  endpoint = server.address,
): Promise<CliResult> {
  return runCli(
    ['preflight', '--project', PROJECT, ...args],
    baseEnv({ SECRET_MANAGER_ENDPOINT: endpoint, SECRET_MANAGER_INSECURE: 'true', ...extra }),
  );
}

/** The report line of one check, e.g. `PASS  credentials  ...`. */
function line(result: CliResult, title: string): string {
  const found = result.stdout
    .split('\n')
    .find((l) => new RegExp(`^(PASS|FAIL|WARN|SKIP)  ${title.replace(/\./g, '\\.')}\\s`).test(l));
  assert.ok(found !== undefined, `no report line for ${title} in:\n${result.stdout}`);
  return found;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

before(async () => {
  server = await startSecretManagerTestServer({ project: PROJECT });
});

after(async () => {
  await server.stop();
});

beforeEach(() => {
  server.setGrantedPermissions(undefined);
  server.clearFaults();
  server.resetCalls();
});

describe('pull-secret preflight against the Secret Manager test server', () => {
  test('all good: every check passes with one read-only call, exit 0', async () => {
    const result = await preflight([]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    assert.match(
      result.stdout,
      new RegExp(
        `^Preflight for project ${PROJECT} as ${SA.replace(/\./g, '\\.')} \\(permissions tested on ${PROBE}\\)`,
      ),
    );
    assert.match(
      line(result, 'credentials'),
      /^PASS .*not needed: plaintext connection to a loopback test endpoint/,
    );
    assert.match(line(result, 'Secret Manager API'), new RegExp(`^PASS .*reachable at ${server.address}`));
    for (const permission of ALL)
      assert.match(line(result, `permission ${permission}`), new RegExp(`^PASS .*granted on ${PROBE}`));
    assert.match(result.stdout, /6 passed, 0 failed, 0 warnings, 0 skipped\n$/);
    assert.doesNotMatch(result.stdout, /fix:/);
    assert.deepEqual(
      server.callLog.map((c) => `${c.method} ${c.resource} ${c.code}`),
      [`TestIamPermissions ${PROBE} OK`],
    );
  });

  test('a missing permission fails with the exact gcloud grant, exit 1', async () => {
    server.setGrantedPermissions(ALL.filter((p) => p !== 'secretmanager.versions.add'));
    const result = await preflight([]);
    assert.equal(result.code, 1);
    assert.match(
      line(result, 'permission secretmanager.versions.add'),
      new RegExp(`^FAIL .*not granted on ${PROBE}`),
    );
    assert.ok(
      result.stdout.includes(
        `      fix: gcloud projects add-iam-policy-binding ${PROJECT} --member=serviceAccount:${SA} --role=roles/secretmanager.secretVersionAdder\n`,
      ),
      result.stdout,
    );
    for (const permission of ALL.filter((p) => p !== 'secretmanager.versions.add'))
      assert.match(line(result, `permission ${permission}`), /^PASS /);
    assert.match(result.stdout, /5 passed, 1 failed, 0 warnings, 0 skipped/);
    assert.equal(
      result.stderr,
      'pull-secret: preflight failed: 1 check failed; run the fix commands above, then preflight again\n',
    );
  });

  test('the fix names the service account given, and --json carries the same verdicts', async () => {
    server.setGrantedPermissions(ALL.filter((p) => p !== 'secretmanager.secrets.create'));
    const other = 'pullsecret-manager@platform-project.iam.gserviceaccount.com';
    const result = await preflight(['--service-account', other, '--json']);
    assert.equal(result.code, 1);
    const report = JSON.parse(result.stdout) as {
      ok: boolean;
      serviceAccount: string;
      checks: Array<{ id: string; status: string; fix: string[] }>;
    };
    assert.equal(report.ok, false);
    assert.equal(report.serviceAccount, other);
    const create = report.checks.find((c) => c.id === 'permission:secretmanager.secrets.create');
    assert.deepEqual(create?.fix, [
      `gcloud projects add-iam-policy-binding ${PROJECT} --member=serviceAccount:${other} --role=roles/secretmanager.admin`,
    ]);
    assert.deepEqual(
      report.checks.map((c) => `${c.id} ${c.status}`),
      [
        'credentials pass',
        'api pass',
        ...ALL.map((p) => `permission:${p} ${p === 'secretmanager.secrets.create' ? 'fail' : 'pass'}`),
      ],
    );
  });

  test('no permission at all: GetSecret is refused too, so every permission fails', async () => {
    server.setGrantedPermissions([]);
    const result = await preflight([]);
    assert.equal(result.code, 1);
    for (const permission of ALL)
      assert.match(line(result, `permission ${permission}`), /^FAIL .*not granted/);
    assert.match(result.stdout, /--role=roles\/secretmanager\.admin\n/);
    assert.match(result.stdout, /--role=roles\/secretmanager\.viewer\n/);
    assert.match(result.stdout, /--role=roles\/secretmanager\.secretAccessor\n/);
    assert.deepEqual(
      server.callLog.map((c) => `${c.method} ${c.code}`),
      ['TestIamPermissions OK', 'GetSecret PERMISSION_DENIED'],
    );
  });

  test('--secret tests an existing secret', async () => {
    server.state.seedSecret('hyperfleet-cls-1-pull-secret', { labels: { 'managed-by': 'hyperfleet' } });
    const result = await preflight(['--secret', 'hyperfleet-cls-1-pull-secret']);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      server.callLog.map((c) => c.resource),
      [`projects/${PROJECT}/secrets/hyperfleet-cls-1-pull-secret`],
    );
  });

  test('API unreachable: the API check fails with the enable command, permissions are skipped', async () => {
    const endpoint = `127.0.0.1:${await closedPort()}`;
    const result = await preflight([], { GCP_CALL_TIMEOUT_MS: '3000' }, endpoint);
    assert.equal(result.code, 1);
    assert.match(line(result, 'credentials'), /^PASS /);
    assert.match(
      line(result, 'Secret Manager API'),
      new RegExp(
        `^FAIL .*cannot reach Secret Manager at ${endpoint}: GCP Secret Manager TestIamPermissions failed for ${PROBE}: UNAVAILABLE`,
      ),
    );
    assert.ok(
      result.stdout.includes(
        `      fix: gcloud services enable secretmanager.googleapis.com --project=${PROJECT}\n`,
      ),
      result.stdout,
    );
    for (const permission of ALL)
      assert.match(line(result, `permission ${permission}`), /^SKIP .*needs the Secret Manager API/);
    assert.match(result.stdout, /1 passed, 1 failed, 0 warnings, 4 skipped/);
  });

  test('unauthenticated: the fix is an ADC login as the service account, or the Workload Identity binding in Kubernetes', async () => {
    server.injectFault({ method: 'TestIamPermissions', code: status.UNAUTHENTICATED });
    const local = await preflight([]);
    assert.equal(local.code, 1);
    assert.match(
      line(local, 'Secret Manager API'),
      /^FAIL .*the credentials were missing or rejected: .*UNAUTHENTICATED/,
    );
    assert.ok(
      local.stdout.includes(
        `      fix: gcloud auth application-default login --impersonate-service-account=${SA}\n`,
      ),
      local.stdout,
    );

    server.injectFault({ method: 'TestIamPermissions', code: status.UNAUTHENTICATED });
    const inCluster = await preflight(['--workload-pool', 'platform-project.svc.id.goog'], {
      KUBERNETES_SERVICE_HOST: '10.0.0.1',
    });
    assert.equal(inCluster.code, 1);
    assert.ok(
      inCluster.stdout.includes(
        `      fix: gcloud iam service-accounts add-iam-policy-binding ${SA} --role=roles/iam.workloadIdentityUser ` +
          '--member="serviceAccount:platform-project.svc.id.goog[hyperfleet-system/pullsecret-adapter]"\n',
      ),
      inCluster.stdout,
    );
  });

  test('a disabled API (PERMISSION_DENIED on TestIamPermissions) says so and prints the enable command', async () => {
    const text = 'Secret Manager API has not been used in project 123456 before or it is disabled.';
    server.injectFault({ method: 'TestIamPermissions', code: status.PERMISSION_DENIED, message: text });
    const result = await preflight([]);
    assert.equal(result.code, 1);
    assert.ok(
      line(result, 'Secret Manager API').includes(
        `PERMISSION_DENIED (${text}). The Secret Manager API may be disabled in the project, or the project does not exist.`,
      ),
    );
    assert.ok(
      result.stdout.includes(
        `      fix: gcloud services enable secretmanager.googleapis.com --project=${PROJECT}\n`,
      ),
    );
  });

  test('usage errors exit 2 before any call', async () => {
    const bad = await preflight(['--service-account', 'not-an-email']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /invalid --service-account/);
    const project = await runCli(['preflight', '--project', 'Bad_Project'], baseEnv());
    assert.equal(project.code, 2);
    assert.match(project.stderr, /^pull-secret: invalid --project: must be a GCP project id/);
    const missing = await runCli(['preflight'], baseEnv());
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /required option '--project <id>' not specified/);
    assert.equal(server.totalCalls, 0);
  });

  test('a store without preflight checks says so (exit 2), chosen by --store or SECRET_STORE', async () => {
    for (const result of [
      await runCli(['preflight', '--store', 'local'], baseEnv()),
      await runCli(['preflight'], baseEnv({ SECRET_STORE: 'local' })),
    ]) {
      assert.equal(result.code, 2);
      assert.match(
        result.stderr,
        /^pull-secret: the local store has no preflight checks: nothing needs to be set up before its first cluster/,
      );
    }
    const unknown = await runCli(['preflight', '--store', 'vault'], baseEnv());
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /must be one of local, gcp/);
    assert.equal(server.totalCalls, 0);
  });
});
