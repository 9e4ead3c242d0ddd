import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { baseEnv, runCli, type CliResult } from '../support/cli.js';
import { CANARY_PULL_SECRET, findCanary } from '../support/fixtures.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import {
  startAwsSecretsManagerTestServer,
  TEST_CREDENTIALS,
  type AwsSecretsManagerTestServer,
} from '../servers/aws-secrets-manager/index.js';
import { awsTestEnv } from '../support/store-harness.js';
import { validatePullSecret } from '../../src/pullsecret/validate.js';
import { decodeClusterEvent } from '../../src/events/cluster-event.js';
import { deriveClusterNames } from '../../src/pullsecret/cluster-names.js';
import { conditionOf, startAdapterStack } from '../support/adapter-stack.js';

// Every path of the job runs with the canary credentials; none of their forms may appear in
// stdout, stderr, result files, store files or error messages.

const PROJECT = 'canary-project-1';
let dir: string;
let server: SecretManagerTestServer;
let aws: AwsSecretsManagerTestServer;
let n = 0;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ps-leak-'));
  server = await startSecretManagerTestServer({ project: PROJECT });
  aws = await startAwsSecretsManagerTestServer();
});
after(async () => {
  await server.stop();
  await aws.stop();
  await rm(dir, { recursive: true, force: true });
});

const canary = JSON.parse(CANARY_PULL_SECRET) as { auths: Record<string, Record<string, string>> };
const canaryAuth = Object.values(canary.auths)[0]?.auth ?? '';
const otherAuth = Buffer.from('someone:else-entirely').toString('base64');
const VARIANTS: Record<string, string> = {
  valid: CANARY_PULL_SECRET,
  changed: JSON.stringify({ auths: { ...canary.auths, 'quay.io/extra': { auth: canaryAuth } } }),
  'truncated JSON': CANARY_PULL_SECRET.slice(0, -3),
  'trailing garbage': `${CANARY_PULL_SECRET}x`,
  'bad registry key': JSON.stringify({ auths: { ...canary.auths, 'not a registry': { auth: canaryAuth } } }),
  'auth not base64': JSON.stringify({ auths: { 'quay.io': { auth: `${canaryAuth}!` } } }),
  oversized: JSON.stringify({
    auths: { ...canary.auths, 'quay.io': { auth: canaryAuth, pad: 'p'.repeat(70_000) } },
  }),
  'auths not an object': JSON.stringify({ auths: [canary.auths] }),
  // The canary only in the key, so no registered auth masks an echo of it by chance.
  'credential in a registry key': JSON.stringify({
    auths: { 'quay.io': { auth: otherAuth }, 'pullbot:s3cr3t-canary-7Q2v@quay.io': { auth: otherAuth } },
  }),
  'credential in a URL registry key': JSON.stringify({
    auths: { 'https://pullbot:s3cr3t-canary-7Q2v@quay.io/v1/': { auth: otherAuth } },
  }),
  'duplicate registry': CANARY_PULL_SECRET.replace('"quay.io"', '"registry.redhat.io"'),
  'duplicate auth': CANARY_PULL_SECRET.replace(
    `"auth":"${canaryAuth}"`,
    `"auth":"${canaryAuth}","auth":"${Buffer.from('other:pw').toString('base64')}"`,
  ),
  'deep nesting': CANARY_PULL_SECRET.replace(/}$/, `,"x":${'['.repeat(5000)}${']'.repeat(5000)}}`),
};

async function filesUnder(root: string): Promise<string> {
  let text = '';
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) text += await readFile(join(entry.parentPath, entry.name), 'latin1');
  }
  return text;
}

function assertClean(what: string, result: CliResult, extra = ''): void {
  for (const [stream, text] of [
    ['stdout', result.stdout],
    ['stderr', result.stderr],
    ['files', extra],
  ] as const) {
    const found = findCanary(text);
    assert.equal(found, undefined, `${what}: canary form found in ${stream}`);
  }
}

/** The AWS store's job environment against its test server. */
const awsEnv = () => ({
  ...awsTestEnv(),
  SECRET_STORE: 'aws',
  AWS_SECRETS_ACCOUNT_ID: TEST_CREDENTIALS.accountId,
  AWS_SECRETS_REGION: aws.region,
  AWS_SECRETS_ENDPOINT: aws.endpoint,
});
/** Variants that reach the store; the others fail validation the same way whatever the store. */
const REACHING_THE_STORE = new Set(['valid', 'changed', 'oversized']);

for (const store of ['local', 'gcp', 'aws'] as const) {
  for (const [variant, data] of Object.entries(VARIANTS)) {
    if (store === 'aws' && !REACHING_THE_STORE.has(variant)) continue;
    test(`${store} store, ${variant}: no canary in output, result file or store files`, async () => {
      const cluster = `cls-leak-${++n}`;
      const storeDir = join(dir, `store-${n}`);
      const resultsPath = join(dir, `result-${n}.json`);
      const env = baseEnv({
        CLUSTER_ID: cluster,
        PULL_SECRET_DATA: data,
        RESULTS_PATH: resultsPath,
        LOG_LEVEL: 'debug',
        ...(store === 'local'
          ? {
              LOCAL_STORE_DIR: storeDir,
              KUBERNETES_TARGET: 'manifests',
              MANIFEST_DIR: join(dir, `manifests-${n}`),
            }
          : store === 'gcp'
            ? {
                SECRET_STORE: 'gcp',
                GCP_PROJECT_ID: PROJECT,
                SECRET_MANAGER_ENDPOINT: server.address,
                SECRET_MANAGER_INSECURE: 'true',
              }
            : awsEnv()),
      });
      const runs: CliResult[] = [];
      runs.push(await runCli(['run-job', 'pull-secret', '--dry-run'], env));
      runs.push(await runCli(['run-job', 'pull-secret'], env));
      runs.push(await runCli(['run-job', 'pull-secret'], env));
      runs.push(await runCli(['inspect', '--cluster-id', cluster], env));
      const files =
        (await readFile(resultsPath, 'utf8')) +
        (store === 'local' ? await filesUnder(storeDir).catch(() => '') : '');
      runs.forEach((r, i) => assertClean(`${store}/${variant} run ${i}`, r, files));
      assert.ok(
        runs.some((r) => r.stdout.length + r.stderr.length > 0),
        'the runs produced output to search',
      );
    });
  }
}

test('gcp store failure paths (retries, permission denied, unmanaged) leak nothing', async () => {
  const base = {
    CLUSTER_ID: 'cls-leak-faults',
    PULL_SECRET_DATA: CANARY_PULL_SECRET,
    SECRET_STORE: 'gcp',
    GCP_PROJECT_ID: PROJECT,
    SECRET_MANAGER_ENDPOINT: server.address,
    SECRET_MANAGER_INSECURE: 'true',
    LOG_LEVEL: 'debug',
  };
  server.injectFault({ method: 'AddSecretVersion', code: status.UNAVAILABLE, afterApply: true });
  server.injectFault({ method: 'AccessSecretVersion', code: status.INTERNAL });
  assertClean('retries', await runCli(['run-job', 'pull-secret'], baseEnv(base)));
  server.injectFault({ method: 'AccessSecretVersion', code: status.PERMISSION_DENIED });
  assertClean('denied', await runCli(['run-job', 'pull-secret'], baseEnv(base)));
  server.injectFault({
    method: 'AddSecretVersion',
    code: status.INVALID_ARGUMENT,
    message: `bad payload ${CANARY_PULL_SECRET}`,
  });
  const changed = JSON.stringify({ auths: { ...canary.auths, 'quay.io/x': { auth: canaryAuth } } });
  assertClean(
    'server echoes payload',
    await runCli(['run-job', 'pull-secret'], baseEnv({ ...base, PULL_SECRET_DATA: changed })),
  );
  server.state.seedSecret('hyperfleet-cls-leak-foreign-pull-secret', {
    labels: {},
    versions: [{ data: CANARY_PULL_SECRET }],
  });
  // A change, so the job is refused (the same content would be a no-op, reported unchanged).
  assertClean(
    'unmanaged',
    await runCli(
      ['run-job', 'pull-secret'],
      baseEnv({ ...base, CLUSTER_ID: 'cls-leak-foreign', PULL_SECRET_DATA: changed }),
    ),
  );
  assert.equal(server.pendingFaults, 0, 'every injected fault was hit');
});

test('aws store failure paths (throttling, lost answer, access denied, KMS, unmanaged, wrong key) leak nothing', async () => {
  const base = {
    ...awsEnv(),
    CLUSTER_ID: 'cls-leak-aws',
    PULL_SECRET_DATA: CANARY_PULL_SECRET,
    LOG_LEVEL: 'debug',
  };
  aws.injectFault({ operation: 'GetSecretValue', type: 'ThrottlingException' });
  aws.injectFault({ operation: 'PutSecretValue', reset: true, afterApply: true });
  assertClean('retries', await runCli(['run-job', 'pull-secret'], baseEnv(base)));
  aws.injectFault({ operation: 'GetSecretValue', type: 'AccessDeniedException' });
  assertClean('denied', await runCli(['run-job', 'pull-secret'], baseEnv(base)));
  const changed = JSON.stringify({ auths: { ...canary.auths, 'quay.io/x': { auth: canaryAuth } } });
  aws.injectFault({
    operation: 'PutSecretValue',
    type: 'ValidationException',
    message: `bad value ${CANARY_PULL_SECRET}`,
  });
  assertClean(
    'server echoes payload',
    await runCli(['run-job', 'pull-secret'], baseEnv({ ...base, PULL_SECRET_DATA: changed })),
  );
  aws.state.seed(TEST_CREDENTIALS.accountId, 'hyperfleet-cls-leak-aws-kms-pull-secret', {
    tags: { 'managed-by': 'hyperfleet' },
    values: [CANARY_PULL_SECRET],
    kmsKeyId: 'alias/broken',
  });
  aws.state.unusableKeys.add('alias/broken');
  assertClean(
    'kms',
    await runCli(['run-job', 'pull-secret'], baseEnv({ ...base, CLUSTER_ID: 'cls-leak-aws-kms' })),
  );
  aws.state.seed(TEST_CREDENTIALS.accountId, 'hyperfleet-cls-leak-aws-foreign-pull-secret', {
    values: [CANARY_PULL_SECRET],
  });
  assertClean(
    'unmanaged',
    await runCli(
      ['run-job', 'pull-secret'],
      baseEnv({ ...base, CLUSTER_ID: 'cls-leak-aws-foreign', PULL_SECRET_DATA: changed }),
    ),
  );
  assertClean(
    'wrong key',
    await runCli(
      ['run-job', 'pull-secret'],
      baseEnv({ ...base, AWS_SECRET_ACCESS_KEY: 'wrong-secret-key-0000000000000000000000' }),
    ),
  );
  assert.ok(
    aws.callLog.some((c) => c.code === 'DecryptionFailure') &&
      aws.callLog.some((c) => c.code === 'InvalidSignatureException'),
    'the failure paths were reached',
  );
});

test('validation errors never carry the canary in message or stack', () => {
  for (const [variant, data] of Object.entries(VARIANTS)) {
    if (variant === 'valid' || variant === 'changed') continue;
    try {
      validatePullSecret(data, { maxBytes: 65536, targetName: 'gcp store' });
      assert.fail(`${variant} should be invalid`);
    } catch (err) {
      const e = err as Error;
      assert.equal(findCanary(`${e.message}\n${e.stack ?? ''}`), undefined, variant);
    }
  }
});

test('a credential sent as an event id or a cluster id is never echoed', () => {
  for (const secret of ['pullbot:s3cr3t-canary-7Q2v', 's3cr3t-canary-7Q2v', canaryAuth]) {
    const bodies = [
      {
        specversion: '1.0',
        id: secret,
        source: 's',
        type: 'com.redhat.hyperfleet.cluster.reconcile',
        data: { id: secret, generation: 1 },
      },
      {
        specversion: '1.0',
        id: secret,
        source: 's',
        type: 'com.redhat.hyperfleet.cluster.reconcile',
        data: { generation: 1 },
      },
      { specversion: '1.0', id: secret, source: 's', type: secret, data: { id: 'cls-1' } },
      {
        specversion: '1.0',
        id: 'e-1',
        source: 's',
        type: 'com.redhat.hyperfleet.cluster.reconcile',
        data: { id: secret },
      },
    ];
    for (const body of bodies) {
      let text = '';
      try {
        const event = decodeClusterEvent(Buffer.from(JSON.stringify(body)));
        deriveClusterNames({ clusterId: event.clusterId });
        assert.fail('expected a refusal');
      } catch (err) {
        const e = err as Error;
        text = `${e.message}\n${e.stack ?? ''}`;
      }
      assert.equal(findCanary(text), undefined, text);
      assert.ok(!text.includes(secret), text);
    }
  }
});

test('adapter: credentials in a registry key or an event id reach no log line or status', async () => {
  const stack = await startAdapterStack();
  try {
    const hostile = await stack.seedCluster({
      pullSecret: { data: VARIANTS['credential in a registry key'] },
    });
    await stack.publish(hostile);
    const status = await stack.waitForStatus(
      hostile.id,
      (st) => conditionOf(st, 'Applied') === 'False/InvalidPullSecret',
    );
    assert.match(
      status.conditions.find((c) => c.type === 'Applied')?.message ?? '',
      /registry key #2 \(\d+ characters, sha256 [0-9a-f]{8}…\)/,
    );
    const event = {
      specversion: '1.0',
      id: 'pullbot:s3cr3t-canary-7Q2v',
      source: 's',
      type: 'com.redhat.hyperfleet.cluster.reconcile',
      data: { id: 'pullbot:s3cr3t-canary-7Q2v', generation: 1 },
    };
    await stack.adapter.broker.publish(Buffer.from(JSON.stringify(event)));
    // A valid cluster id with a credential as the event id: processed, and the id logged as a hash.
    const valid = await stack.seedCluster();
    await stack.adapter.broker.publish(
      Buffer.from(JSON.stringify({ ...event, data: { id: valid.id, generation: 1 } })),
    );
    await stack.waitForStatus(valid.id, (st) => conditionOf(st, 'Available') === 'True/SecretAvailable');
    const deadline = Date.now() + 10_000;
    while (!stack.logs.some((l) => l.includes('Rejected an invalid event')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(
      stack.logs.some((l) => l.includes('Rejected an invalid event')),
      'the event was rejected',
    );
    assert.equal(findCanary(stack.logs.join('\n')), undefined, 'logs');
    assert.equal(
      findCanary(JSON.stringify(stack.api.listStatuses(hostile.id))),
      undefined,
      'status payloads',
    );
  } finally {
    await stack.stop();
  }
});

test('adapter transfer checks: the account-service token and the transferred pull secret reach no log, status, metric or admin answer', async () => {
  const { startAccountServiceStandIn } = await import('../../src/dev/account-service/index.js');
  const { adminRequest } = await import('../../src/admin/admin-client.js');
  const { parseTokenState } = await import('../../src/admin/token-state.js');
  const account = await startAccountServiceStandIn();
  const adminDir = await mkdtemp(join(dir, 'transfer-admin-'));
  const tokenFile = join(adminDir, 'admin-tokens.json');
  const stack = await startAdapterStack({
    admin: { enabled: true, host: '127.0.0.1', port: 0, tokens: { file: tokenFile } },
    accountService: {
      baseUrl: account.url,
      timeoutMs: 2000,
      transfer: { interval: '1s', jitter: 0, requestsPerSecond: 50 },
    },
  });
  // The cluster's cloud.openshift.com token is the canary auth (it travels in the AccessToken header);
  // the transferred quay.io credential is a second secret of its own.
  const transferredAuth = Buffer.from('new-owner:transferred-s3cr3t-9Xk2').toString('base64');
  const transferred = JSON.stringify({ auths: { 'quay.io': { auth: transferredAuth } } });
  const needles = [transferredAuth, 'transferred-s3cr3t-9Xk2', transferred];
  const leaked = (text: string) => findCanary(text) ?? needles.find((n) => text.includes(n));
  try {
    const spec = JSON.stringify({
      auths: { 'cloud.openshift.com': { auth: canaryAuth }, 'registry.example.com': { auth: otherAuth } },
    });
    const cluster = await stack.seedCluster({ pullSecret: { data: spec } });
    account.setClusterToken(cluster.id, canaryAuth);
    account.addTransfer({
      id: 'transfer-leak-1',
      clusterId: cluster.id,
      status: 'accepted',
      secret: transferred,
    });
    await stack.waitForStatus(cluster.id, (st) => st.data?.transferId === 'transfer-leak-1', 20_000);
    const server = `http://127.0.0.1:${stack.adapter.admin.server?.port ?? 0}`;
    const token = parseTokenState(await readFile(tokenFile, 'utf8'), 'leak').current.token;
    const answers: string[] = [];
    for (const fault of [
      { status: 403 },
      { status: 500 },
      { body: `<html>${canaryAuth}</html>` },
      { duplicate: true },
    ]) {
      account.injectFault({ route: 'transfers', ...fault });
      const answer = await adminRequest({
        server,
        method: 'POST',
        path: `/clusters/${cluster.id}/transfer-check`,
        token,
      });
      answers.push(JSON.stringify(answer.json));
    }
    answers.push(
      JSON.stringify(
        (
          await adminRequest({
            server,
            method: 'POST',
            path: `/clusters/${cluster.id}/transfer-check`,
            token,
          })
        ).json,
      ),
    );
    assert.match(answers.join('\n'), /"outcome":"refused"/);
    assert.match(answers.join('\n'), /"outcome":"unexpected"/);
    const metrics = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    assert.equal(leaked(stack.logs.join('\n')), undefined, 'logs');
    assert.equal(leaked(JSON.stringify(stack.api.listStatuses(cluster.id))), undefined, 'status payloads');
    assert.equal(leaked(answers.join('\n')), undefined, 'admin answers');
    assert.equal(leaked(metrics), undefined, 'metrics');
  } finally {
    await stack.stop();
    await account.stop();
  }
});
