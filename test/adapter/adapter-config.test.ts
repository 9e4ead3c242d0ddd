import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseEnv, runCli } from '../support/cli.js';

// `validate-config` and the adapter's start-up checks: all problems at once, exit 2.

test('the example configuration is valid', async () => {
  const result = await runCli(['validate-config', '--config', 'examples/adapter.yaml'], baseEnv());
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    /configuration is valid: broker rabbitmq, store gcp, Kubernetes target api, execution in-process/,
  );
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
      for (const path of ['hyperfleetApi.baseUrl', 'broker', 'execution.mode', 'execution.concurrency'])
        assert.match(result.stderr, new RegExp(path.replace('.', '\\.')));
      assert.ok(!result.stderr.includes('hunter2secret'), 'the broker URL password is never echoed');
    }
    const env = { ...baseEnv(), HYPERFLEET_API_URL: 'http://127.0.0.1:1', BROKER_TYPE: 'embedded' };
    const overridden = await runCli(['validate-config'], env);
    assert.equal(overridden.code, 0, overridden.stderr);
    const broken = await runCli(['validate-config', '--config', join(dir, 'missing.yaml')], baseEnv());
    assert.equal(broken.code, 2);
    assert.match(broken.stderr, /the config file \S+ does not exist/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a precondition that does not parse is a configuration error naming it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-config-'));
  try {
    const file = join(dir, 'cel.yaml');
    await writeFile(
      file,
      'hyperfleetApi: { baseUrl: "http://127.0.0.1:1" }\nbroker: { type: embedded }\npreconditions: { rules: [ { name: broken-rule, expression: "spec.provider ==", message: m } ] }\n',
    );
    for (const command of ['validate-config', 'adapter']) {
      const result = await runCli([command, '--config', file], baseEnv());
      assert.equal(result.code, 2);
      assert.match(result.stderr, /precondition broken-rule: the CEL expression does not parse/);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('validate-config and --help cover providers: the served stores, a store this build does not know', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-config-'));
  try {
    const head = 'hyperfleetApi: { baseUrl: "http://127.0.0.1:1" }\nbroker: { type: embedded }\n';
    const good = join(dir, 'providers.yaml');
    await writeFile(
      good,
      `${head}providers:\n  gcp: {}\n  onprem: { store: local, settings: { dir: /data/store } }\n`,
    );
    const valid = await runCli(['validate-config', '--config', good], baseEnv());
    assert.equal(valid.code, 0, valid.stderr);
    assert.match(
      valid.stdout,
      /configuration is valid: broker embedded, providers gcp \(gcp store\), onprem \(local store\),/,
    );
    const bad = join(dir, 'unknown-store.yaml');
    await writeFile(
      bad,
      `${head}providers:\n  vault: { store: hashicorp }\n  gcp: { fieldPaths: { projectId: [] } }\n`,
    );
    const refused = await runCli(['validate-config', '--config', bad], baseEnv());
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /providers\.vault\.store: hashicorp is not a store this build knows/);
    assert.match(refused.stderr, /providers\.gcp\.fieldPaths\.projectId: required/);
    const help = await runCli(['adapter', '--help'], baseEnv());
    assert.match(
      help.stdout,
      /gcp +store gcp; projectId <- preconditions\.fieldPaths\.projectId; kmsKeyName <- spec\.gcp\.kmsKeyName/,
    );
    assert.match(help.stdout, /azure +store azure.*vaultUrl <- spec\.azure\.keyVaultUrl/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('no --config and no environment: says what to set, by key and variable, and where every setting is listed', async () => {
  const result = await runCli(['adapter'], baseEnv());
  assert.equal(result.code, 2, result.stderr);
  assert.match(
    result.stderr,
    /invalid adapter configuration \(no --config FILE given: defaults and environment variables only; give --config or set the variables below\)/,
  );
  assert.match(
    result.stderr,
    /hyperfleetApi\.baseUrl: missing: set hyperfleetApi\.baseUrl in the config file, or HYPERFLEET_API_URL or HYPERFLEET_API_BASE_URL/,
  );
  assert.match(result.stderr, /broker\.type: missing: set broker\.type in the config file, or BROKER_TYPE/);
  assert.match(
    result.stderr,
    /Every setting, its key and its environment variable: pull-secret adapter --help\n$/,
  );
  assert.doesNotMatch(result.stderr, /Invalid input|received undefined/, 'no raw schema text');
});

test('BROKER_TYPE=rabbitmq alone names the RabbitMQ URL variables', async () => {
  const result = await runCli(
    ['validate-config'],
    baseEnv({ BROKER_TYPE: 'rabbitmq', HYPERFLEET_API_BASE_URL: 'http://127.0.0.1:1' }),
  );
  assert.equal(result.code, 2, result.stderr);
  assert.match(
    result.stderr,
    /broker\.url: missing: set broker\.url in the config file, or BROKER_URL or BROKER_RABBITMQ_URL/,
  );
  assert.doesNotMatch(result.stderr, /hyperfleetApi/);
});

test('a config file that does not exist says so in words', async () => {
  const missing = join(tmpdir(), 'no-such-dir-ps', 'nope.yaml');
  for (const command of ['validate-config', 'adapter']) {
    const result = await runCli([command, '--config', missing], baseEnv());
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stderr, `pull-secret: the config file ${missing} does not exist\n`);
  }
});
