import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { baseEnv, runCli, type CliResult } from './support/cli.js';
import { CANARY_PULL_SECRET, findCanary } from './support/fixtures.js';
import { startSecretManagerTestServer, type SecretManagerTestServer } from './servers/gcp-secret-manager/index.js';
import { validatePullSecret } from '../src/pullsecret/validate.js';

// Every path of the job runs with the canary credentials; none of their forms may appear in
// stdout, stderr, result files, store files or error messages.

const PROJECT = 'canary-project-1';
let dir: string;
let server: SecretManagerTestServer;
let n = 0;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ps-leak-'));
  server = await startSecretManagerTestServer({ project: PROJECT });
});
after(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

const canary = JSON.parse(CANARY_PULL_SECRET) as { auths: Record<string, Record<string, string>> };
const canaryAuth = Object.values(canary.auths)[0]?.auth ?? '';
const VARIANTS: Record<string, string> = {
  'valid': CANARY_PULL_SECRET,
  'changed': JSON.stringify({ auths: { ...canary.auths, 'quay.io/extra': { auth: canaryAuth } } }),
  'truncated JSON': CANARY_PULL_SECRET.slice(0, -3),
  'trailing garbage': `${CANARY_PULL_SECRET}x`,
  'bad registry key': JSON.stringify({ auths: { ...canary.auths, 'not a registry': { auth: canaryAuth } } }),
  'auth not base64': JSON.stringify({ auths: { 'quay.io': { auth: `${canaryAuth}!` } } }),
  'oversized': JSON.stringify({ auths: { ...canary.auths, 'quay.io': { auth: canaryAuth, pad: 'p'.repeat(70_000) } } }),
  'auths not an object': JSON.stringify({ auths: [canary.auths] }),
};

async function filesUnder(root: string): Promise<string> {
  let text = '';
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) text += await readFile(join(entry.parentPath, entry.name), 'latin1');
  }
  return text;
}

function assertClean(what: string, result: CliResult, extra = ''): void {
  for (const [stream, text] of [['stdout', result.stdout], ['stderr', result.stderr], ['files', extra]] as const) {
    const found = findCanary(text);
    assert.equal(found, undefined, `${what}: canary form found in ${stream}`);
  }
}

for (const store of ['local', 'gcp'] as const) {
  for (const [variant, data] of Object.entries(VARIANTS)) {
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
          ? { LOCAL_STORE_DIR: storeDir, KUBERNETES_TARGET: 'manifests', MANIFEST_DIR: join(dir, `manifests-${n}`) }
          : { SECRET_STORE: 'gcp', GCP_PROJECT_ID: PROJECT, SECRET_MANAGER_ENDPOINT: server.address, SECRET_MANAGER_INSECURE: 'true' }),
      });
      const runs: CliResult[] = [];
      runs.push(await runCli(['run-job', 'pull-secret', '--dry-run'], env));
      runs.push(await runCli(['run-job', 'pull-secret'], env));
      runs.push(await runCli(['run-job', 'pull-secret'], env));
      runs.push(await runCli(['inspect', '--cluster-id', cluster], env));
      const files = (await readFile(resultsPath, 'utf8')) + (store === 'local' ? await filesUnder(storeDir).catch(() => '') : '');
      runs.forEach((r, i) => assertClean(`${store}/${variant} run ${i}`, r, files));
      assert.ok(runs.some((r) => r.stdout.length + r.stderr.length > 0), 'the runs produced output to search');
    });
  }
}

test('gcp store failure paths (retries, permission denied, unmanaged) leak nothing', async () => {
  const base = { CLUSTER_ID: 'cls-leak-faults', PULL_SECRET_DATA: CANARY_PULL_SECRET, SECRET_STORE: 'gcp', GCP_PROJECT_ID: PROJECT, SECRET_MANAGER_ENDPOINT: server.address, SECRET_MANAGER_INSECURE: 'true', LOG_LEVEL: 'debug' };
  server.injectFault({ method: 'AddSecretVersion', code: status.UNAVAILABLE, afterApply: true });
  server.injectFault({ method: 'AccessSecretVersion', code: status.INTERNAL });
  assertClean('retries', await runCli(['run-job', 'pull-secret'], baseEnv(base)));
  server.injectFault({ method: 'GetSecret', code: status.PERMISSION_DENIED });
  assertClean('denied', await runCli(['run-job', 'pull-secret'], baseEnv(base)));
  server.injectFault({ method: 'AddSecretVersion', code: status.INVALID_ARGUMENT, message: `bad payload ${CANARY_PULL_SECRET}` });
  const changed = JSON.stringify({ auths: { ...canary.auths, 'quay.io/x': { auth: canaryAuth } } });
  assertClean('server echoes payload', await runCli(['run-job', 'pull-secret'], baseEnv({ ...base, PULL_SECRET_DATA: changed })));
  server.state.seedSecret('hyperfleet-cls-leak-foreign-pull-secret', { labels: {}, versions: [{ data: CANARY_PULL_SECRET }] });
  assertClean('unmanaged', await runCli(['run-job', 'pull-secret'], baseEnv({ ...base, CLUSTER_ID: 'cls-leak-foreign' })));
  assert.equal(server.pendingFaults, 0, 'every injected fault was hit');
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
