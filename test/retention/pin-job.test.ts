// The Job serves a rollback pin: `pull-secret rollback` pins version 1's content beside the
// manifests; the Job run with the unchanged spec then writes nothing and keeps the pinned content
// in the Secret's manifest; a Job with a new pull secret ends the pin.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseEnv, finalLine, runCli } from '../support/cli.js';
import { CANARY_PULL_SECRET, findCanary } from '../support/fixtures.js';

const CLUSTER = '019466a0-8f8e-7abc-9def-0123456789ac';
const content = (n: number) =>
  CANARY_PULL_SECRET.replace(/"email":"canary@example\.com"/g, `"email":"ops${n}@example.com"`);
let dir: string;
before(async () => (dir = await mkdtemp(join(tmpdir(), 'ps-pin-job-'))));
after(async () => rm(dir, { recursive: true, force: true }));

test('the Job serves the pinned content until the pull secret changes', async () => {
  const storeDir = join(dir, 'store');
  const manifestDir = join(dir, 'manifests');
  const job = (n: number) =>
    runCli(
      ['run-job', 'pull-secret'],
      baseEnv({
        LOCAL_STORE_DIR: storeDir,
        CLUSTER_ID: CLUSTER,
        PULL_SECRET_DATA: content(n),
        KUBERNETES_TARGET: 'manifests',
        MANIFEST_DIR: manifestDir,
      }),
    );
  const served = async () => {
    const yaml = await readFile(
      join(manifestDir, `clusters-${CLUSTER}`, `${CLUSTER}-pull-secret.yaml`),
      'utf8',
    );
    return Buffer.from(/\.dockerconfigjson: (\S+)/.exec(yaml)?.[1] ?? '', 'base64').toString();
  };
  for (const n of [1, 2]) assert.equal((await job(n)).code, 0);
  const config = join(dir, 'adapter.yaml');
  await writeFile(
    config,
    JSON.stringify({
      store: { type: 'local', settings: { dir: storeDir } },
      kubernetes: { target: 'manifests', manifestDir },
    }),
  );
  const rollback = await runCli(['rollback', '--cluster-id', CLUSTER, '--config', config], baseEnv());
  assert.equal(rollback.code, 0, rollback.stderr);
  assert.equal(rollback.logs[0]?.pinned, true);
  assert.deepEqual(await readdir(join(manifestDir, '.pins')), [`${CLUSTER}.json`]);
  assert.equal(findCanary(await readFile(join(manifestDir, '.pins', `${CLUSTER}.json`), 'utf8')), undefined);

  const held = await job(2);
  assert.equal(held.code, 0, held.stderr);
  assert.equal(finalLine(held)?.outcome, 'unchanged');
  assert.equal(await served(), content(1));
  // The result carries the pin, for the Job-mode status (docs/retention.md).
  assert.equal((finalLine(held)?.pin as { source_version?: string } | undefined)?.source_version, '1');

  const changed = await job(3);
  assert.equal(changed.code, 0, changed.stderr);
  assert.equal(finalLine(changed)?.outcome, 'updated');
  assert.equal(await served(), content(3));
  assert.deepEqual(await readdir(join(manifestDir, '.pins')), []);
});
