import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PullSecretError } from '../../../errors/index.js';
import { checkCredentials, wellKnownAdcPath, type CredentialsContext } from './credentials-check.js';
import { formatReport } from './report.js';
import { runPreflight, type PreflightInput, type PreflightProbe } from './run-preflight.js';

const SA = 'pullsecret-manager@platform-project.iam.gserviceaccount.com';
const KEY_BYTES = '-----BEGIN PRIVATE KEY-----canary-key-bytes';

function context(
  files: Record<string, string>,
  env: NodeJS.ProcessEnv = {},
  insecure = false,
): CredentialsContext {
  return {
    env,
    homeDir: '/home/op',
    insecure,
    serviceAccount: SA,
    workloadPool: 'platform-project.svc.id.goog',
    kubernetesServiceAccount: { namespace: 'hyperfleet-system', name: 'pullsecret-adapter' },
    readFile: (path) => {
      const text = files[path];
      return text === undefined
        ? Promise.reject(Object.assign(new Error('missing'), { code: 'ENOENT' }))
        : Promise.resolve(text);
    },
  };
}

function input(files: Record<string, string>, env: NodeJS.ProcessEnv = {}): PreflightInput {
  return {
    ...context(files, env),
    project: 'customer-project',
    endpoint: 'secretmanager.googleapis.com:443',
    secretId: 'hyperfleet-preflight-probe',
  };
}

function fakeProbe(
  answer: string[],
  getSecret: () => Promise<unknown>,
): PreflightProbe & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    secretPath: (id) => `projects/customer-project/secrets/${id}`,
    testIamPermissions: (permissions) => {
      calls.push(`TestIamPermissions ${permissions.length}`);
      return Promise.resolve(answer);
    },
    getSecret: () => {
      calls.push('GetSecret');
      return getSecret();
    },
  };
}

test('credentials: GOOGLE_APPLICATION_CREDENTIALS wins and must be a readable credential file', async () => {
  const missing = await checkCredentials(context({}, { GOOGLE_APPLICATION_CREDENTIALS: '/keys/sa.json' }));
  assert.equal(missing.status, 'fail');
  assert.equal(missing.detail, 'GOOGLE_APPLICATION_CREDENTIALS /keys/sa.json cannot be read (ENOENT)');
  assert.deepEqual(missing.fix, [
    `gcloud auth application-default login --impersonate-service-account=${SA}`,
  ]);

  const notJson = await checkCredentials(
    context({ '/keys/sa.json': KEY_BYTES }, { GOOGLE_APPLICATION_CREDENTIALS: '/keys/sa.json' }),
  );
  assert.equal(notJson.status, 'fail');
  assert.match(notJson.detail, /is not valid JSON$/);

  const key = JSON.stringify({ type: 'service_account', private_key: KEY_BYTES, client_email: SA });
  const keyFile = await checkCredentials(
    context({ '/keys/sa.json': key }, { GOOGLE_APPLICATION_CREDENTIALS: '/keys/sa.json' }),
  );
  assert.equal(keyFile.status, 'warn', 'a long-lived key works but is discouraged');
  assert.match(
    keyFile.fix[0] ?? '',
    /roles\/iam\.workloadIdentityUser --member="serviceAccount:platform-project\.svc\.id\.goog\[hyperfleet-system\/pullsecret-adapter\]"$/,
  );
  for (const r of [missing, notJson, keyFile])
    assert.ok(!JSON.stringify(r).includes('canary-key-bytes'), 'never echoes the file');
});

test('credentials: gcloud well-known file, then the metadata server inside Kubernetes', async () => {
  const path = wellKnownAdcPath({}, '/home/op');
  assert.equal(path, '/home/op/.config/gcloud/application_default_credentials.json');
  assert.equal(
    wellKnownAdcPath({ CLOUDSDK_CONFIG: '/etc/gcloud' }, '/home/op'),
    '/etc/gcloud/application_default_credentials.json',
  );
  const user = await checkCredentials(context({ [path]: '{"type":"authorized_user"}' }));
  assert.deepEqual([user.status, user.detail], ['pass', `gcloud credentials file ${path} (authorized_user)`]);

  const gke = await checkCredentials(context({}, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }));
  assert.equal(gke.status, 'pass');
  assert.match(gke.detail, /Workload Identity/);

  const nowhere = await checkCredentials(context({}, {}));
  assert.equal(nowhere.status, 'warn', 'outside Kubernetes the metadata server may still exist (GCE)');
  const off = await checkCredentials(
    context({}, { KUBERNETES_SERVICE_HOST: '10.0.0.1', METADATA_SERVER_DETECTION: 'none' }),
  );
  assert.equal(off.status, 'fail');
  assert.deepEqual(off.fix, [`gcloud auth application-default login --impersonate-service-account=${SA}`]);
  assert.equal((await checkCredentials(context({}, {}, true))).status, 'pass');
});

test('no credentials: no Secret Manager call, the later checks are skipped', async () => {
  let opened = 0;
  const report = await runPreflight(input({}, { METADATA_SERVER_DETECTION: 'none' }), () => {
    opened += 1;
    return Promise.resolve(fakeProbe([], () => Promise.resolve(undefined)));
  });
  assert.equal(opened, 0);
  assert.equal(report.ok, false);
  assert.deepEqual(
    report.checks.map((c) => c.status),
    ['fail', 'skip', 'skip', 'skip', 'skip', 'skip'],
  );
});

test('an empty answer on a secret that does not exist is ambiguous: warnings, secrets.get proven, exit ok', async () => {
  const probe = fakeProbe([], () => Promise.resolve(undefined));
  const report = await runPreflight(input({}, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }), () =>
    Promise.resolve(probe),
  );
  assert.deepEqual(probe.calls, ['TestIamPermissions 4', 'GetSecret']);
  assert.equal(report.ok, true);
  assert.deepEqual(
    report.checks.map((c) => `${c.id} ${c.status}`),
    [
      'credentials pass',
      'api pass',
      'permission:secretmanager.secrets.create warn',
      'permission:secretmanager.secrets.get pass',
      'permission:secretmanager.versions.add warn',
      'permission:secretmanager.versions.access warn',
    ],
  );
  const text = formatReport(report);
  assert.match(
    text,
    /fix: gcloud projects get-iam-policy customer-project --flatten="bindings\[\]\.members" --filter="bindings\.members:serviceAccount:pullsecret-manager@platform-project\.iam\.gserviceaccount\.com" --format="value\(bindings\.role\)"/,
  );
  assert.match(text, /3 passed, 0 failed, 3 warnings, 0 skipped$/);
});

test('an empty answer on an existing secret, or with GetSecret refused, is a real refusal', async () => {
  for (const getSecret of [
    () => Promise.resolve({ name: 'x' }),
    () => Promise.reject(new PullSecretError('STORE_PERMISSION_DENIED', 'denied')),
  ]) {
    const report = await runPreflight(input({}, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }), () =>
      Promise.resolve(fakeProbe([], getSecret)),
    );
    assert.equal(report.ok, false);
    assert.deepEqual(
      report.checks.slice(2).map((c) => c.status),
      ['fail', 'fail', 'fail', 'fail'],
    );
  }
});
