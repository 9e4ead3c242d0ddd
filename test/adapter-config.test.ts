import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseEnv, runCli } from './support/cli.js';

// `validate-config` and the adapter's start-up checks: all problems at once, exit 2.

test('the example configuration is valid', async () => {
  const result = await runCli(['validate-config', '--config', 'examples/adapter.yaml'], baseEnv());
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /configuration is valid: broker rabbitmq, store gcp, Kubernetes target api, execution in-process/);
});

test('every problem is reported together, with its path, and the adapter refuses to start', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-config-'));
  try {
    const file = join(dir, 'bad.yaml');
    await writeFile(
      file,
      [
        'hyperfleetApi: { baseUrl: not-a-url }',
        'broker: { type: rabbitmq, url: "amqp://user:hunter2secret@host", exchange: x }',
        'execution: { mode: sideways, concurrency: 0 }',
        'store: { type: gcp, settings: { endpoint: "no port" } }',
        'preconditions: { rules: [ { name: bad, expression: "spec.provider ==", message: m } ] }',
      ].join('\n'),
    );
    for (const command of [
      ['validate-config', '--config', file],
      ['adapter', '--config', file],
    ]) {
      const result = await runCli(command, baseEnv());
      assert.equal(result.code, 2, result.stderr);
      for (const path of ['hyperfleetApi.baseUrl', 'broker', 'execution.mode', 'execution.concurrency']) assert.match(result.stderr, new RegExp(path.replace('.', '\\.')));
      assert.ok(!result.stderr.includes('hunter2secret'), 'the broker URL password is never echoed');
    }
    const env = { ...baseEnv(), HYPERFLEET_API_URL: 'http://127.0.0.1:1', BROKER_TYPE: 'embedded' };
    const overridden = await runCli(['validate-config'], env);
    assert.equal(overridden.code, 0, overridden.stderr);
    const broken = await runCli(['validate-config', '--config', join(dir, 'missing.yaml')], baseEnv());
    assert.equal(broken.code, 2);
    assert.match(broken.stderr, /cannot read the config file/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a precondition that does not parse is a configuration error naming it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-config-'));
  try {
    const file = join(dir, 'cel.yaml');
    await writeFile(file, 'hyperfleetApi: { baseUrl: "http://127.0.0.1:1" }\nbroker: { type: embedded }\npreconditions: { rules: [ { name: broken-rule, expression: "spec.provider ==", message: m } ] }\n');
    for (const command of ['validate-config', 'adapter']) {
      const result = await runCli([command, '--config', file], baseEnv());
      assert.equal(result.code, 2);
      assert.match(result.stderr, /precondition broken-rule: the CEL expression does not parse/);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
