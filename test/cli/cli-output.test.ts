// `-o table|wide|json|yaml`: the same flag with the same meaning on every command that prints data
// (kubectl's convention). Checked on the command tree and, end to end, on `inspect` (local store).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { parse } from 'yaml';
import { baseEnv, runCli } from '../support/cli.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';

/** The commands that print data, by path. */
const DATA_COMMANDS = [
  'status',
  'inspect',
  'preflight',
  'verify',
  'rollback',
  'transfer check',
  'store rotate-key',
  'admin get',
  'admin list',
  'admin reconcile',
  'admin rollback',
  'admin transfer-check',
];

test('every data command takes -o/--output with table, wide, json and yaml', async () => {
  const loaded = new Map<string, Command>();
  const commands = await Promise.all([
    import('../../src/cli/status.js').then((m) => m.statusCommand()),
    import('../../src/cli/inspect.js').then((m) => m.inspectCommand()),
    import('../../src/cli/preflight.js').then((m) => m.preflightCommand()),
    import('../../src/cli/verify.js').then((m) => m.verifyCommand()),
    import('../../src/cli/rollback.js').then((m) => m.rollbackCommand()),
    import('../../src/cli/transfer.js').then((m) => m.transferCommand()),
    import('../../src/cli/store.js').then((m) => m.storeCommand()),
    import('../../src/cli/admin.js').then((m) => m.adminCommand()),
  ]);
  for (const command of commands) {
    loaded.set(command.name(), command);
    for (const sub of command.commands) loaded.set(`${command.name()} ${sub.name()}`, sub);
  }
  for (const path of DATA_COMMANDS) {
    const option = loaded.get(path)?.options.find((o) => o.long === '--output');
    assert.equal(option?.short, '-o', path);
    assert.deepEqual(option?.argChoices, ['table', 'wide', 'json', 'yaml'], path);
  }
});

test('inspect -o json, yaml, table and wide show the same secret; another format is a usage error', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-output-'));
  try {
    const cluster = '019466a0-8f8e-7abc-9def-0123456789ab';
    const env = baseEnv({
      SECRET_STORE: 'local',
      LOCAL_STORE_DIR: join(dir, 'store'),
      CLUSTER_ID: cluster,
      PULL_SECRET_DATA: VALID_PULL_SECRET,
    });
    assert.equal((await runCli(['run-job', 'pull-secret'], env)).code, 0);
    const outputs = await Promise.all(
      ['json', 'yaml', 'table', 'wide'].map((format) =>
        runCli(['inspect', '--cluster-id', cluster, '-o', format], env),
      ),
    );
    for (const out of outputs) assert.equal(out.code, 0, out.stderr);
    const [json, yaml, table, wide] = outputs.map((o) => o.stdout);
    const view = JSON.parse(json ?? '') as { name: string; current_version: string };
    assert.deepEqual(parse(yaml ?? ''), view, 'yaml holds the same object as json');
    assert.match(table ?? '', new RegExp(`^NAME +${view.name}\\n`));
    assert.match(table ?? '', /\nVERSION +STATE +CREATED\n1 +ENABLED /);
    assert.doesNotMatch(table ?? '', /LABELS/);
    assert.match(wide ?? '', /\nLABELS +.*managed-by=hyperfleet/);
    const bad = await runCli(['inspect', '--cluster-id', cluster, '-o', 'xml'], env);
    assert.equal(bad.code, 2);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
