import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  startAccountServiceStandIn,
  type AccountServiceStandIn,
} from '../../src/dev/account-service/index.js';
import { defaultSecretId, managedLabels } from '../../src/pullsecret/identifiers.js';
import { storeConfigSchema, storeFactory } from '../../src/stores/registry.js';
import { baseEnv, runCli } from '../support/cli.js';
import { CANARY_PULL_SECRET, findCanary } from '../support/fixtures.js';

// `pull-secret transfer check` end to end: a local store holding the cluster's pull secret (the
// canary), the account-service stand-in over loopback HTTP, the decision on stdout and the exit code.

const CLUSTER = '019466a0-2222-7000-8000-000000000002';
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const CLOUD =
  (JSON.parse(CANARY_PULL_SECRET) as { auths: Record<string, { auth: string }> }).auths['cloud.openshift.com']
    ?.auth ?? '';
const TRANSFERRED = JSON.stringify({ auths: { 'quay.io': { auth: b64('newowner:n3w-0wn3r-canary-9Xk') } } });

let dir: string;
let service: AccountServiceStandIn;
let config: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ps-transfer-cli-'));
  service = await startAccountServiceStandIn();
  service.setClusterToken(CLUSTER, CLOUD);
  const settings = { dir: join(dir, 'store') };
  const store = await storeFactory('local').create(storeConfigSchema('local').parse(settings));
  await store.createSecret(defaultSecretId(CLUSTER), managedLabels(CLUSTER));
  await store.addVersion(defaultSecretId(CLUSTER), Buffer.from(CANARY_PULL_SECRET));
  await store.close();
  config = join(dir, 'config.yaml');
  await writeFile(
    config,
    JSON.stringify({
      hyperfleetApi: { baseUrl: 'http://127.0.0.1:9' },
      store: { type: 'local', settings },
      accountService: { baseUrl: service.url, transfer: { interval: '1s' } },
    }),
  );
});
after(async () => {
  await service.stop();
  await rm(dir, { recursive: true, force: true });
});

const run = (...extra: string[]) =>
  runCli(['transfer', 'check', '--cluster-id', CLUSTER, '--config', config, ...extra], baseEnv());

describe('pull-secret transfer check', () => {
  it('prints none (exit 0) while no transfer is open, and update (exit 0) with the registries once one is accepted', async () => {
    const none = await run();
    assert.equal(none.code, 0, none.stderr);
    assert.deepEqual(none.logs[0], {
      cluster_id: CLUSTER,
      kind: 'none',
      reason: 'NoTransferOpen',
      label: 'none',
    });
    service.addTransfer({ id: 'transfer-9', clusterId: CLUSTER, status: 'accepted', secret: TRANSFERRED });
    const update = await run();
    assert.equal(update.code, 0, update.stderr);
    assert.deepEqual(update.logs[0], {
      cluster_id: CLUSTER,
      kind: 'update',
      reason: 'TransferPending',
      label: 'update',
      transfer_id: 'transfer-9',
      replaced: ['quay.io'],
      added: [],
    });
    for (const out of [none, update]) assert.equal(findCanary(out.stdout + out.stderr), undefined);
    assert.ok(!update.stdout.includes('n3w-0wn3r-canary-9Xk'));
  });

  it('exit 1 for a refusal (403 named), exit 2 for a missing config section, exit 1 for a missing secret', async () => {
    service.injectFault({ route: 'transfers', status: 403 });
    const refused = await run();
    assert.equal(refused.code, 1);
    assert.equal(refused.logs[0]?.kind, 'refused');
    assert.match(String(refused.logs[0]?.message), /403/);
    assert.equal(findCanary(refused.stdout + refused.stderr), undefined);

    // On demand, a 5xx is not retried unless asked: no half-hour wait at a terminal.
    service.injectFault({ route: 'transfers', status: 503, times: 2 });
    const down = await run();
    assert.deepEqual([down.code, down.logs[0]?.kind], [1, 'unreachable']);
    const retried = await run('--retries', '1');
    assert.deepEqual([retried.code, retried.logs[0]?.kind], [0, 'update']);

    const bare = join(dir, 'bare.yaml');
    await writeFile(bare, 'store: {type: local}\n');
    const usage = await runCli(['transfer', 'check', '--cluster-id', CLUSTER, '--config', bare], baseEnv());
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /accountService/);

    // A scoped store needs every setting of its scope, named by key where it has several (AWS).
    const aws = join(dir, 'aws.yaml');
    await writeFile(
      aws,
      JSON.stringify({ store: { type: 'aws' }, accountService: { baseUrl: service.url } }),
    );
    const awsRun = (...extra: string[]) =>
      runCli(['transfer', 'check', '--cluster-id', CLUSTER, '--config', aws, ...extra], baseEnv());
    const noScope = await awsRun('--scope', 'accountId=123456789012');
    assert.equal(noScope.code, 2);
    assert.match(noScope.stderr, /needs its AWS account and region: --scope region=VALUE/);
    const projectOnly = await awsRun('--project', 'p');
    assert.equal(projectOnly.code, 2);
    assert.match(projectOnly.stderr, /scope is accountId and region: give them with --scope/);

    const missing = await run('--secret-name', 'no-such-secret');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no-such-secret/);
  });
});
