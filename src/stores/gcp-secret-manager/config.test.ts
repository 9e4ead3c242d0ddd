import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseEnv } from '../../config/env.js';
import { gcpStoreConfigSchema, gcpStoreEnv, parseEndpoint } from './config.js';
import { isLoopbackHost } from '../../util/loopback.js';

function fromEnv(env: Record<string, string | undefined>) {
  return parseEnv(gcpStoreConfigSchema, gcpStoreEnv, env);
}

test('a project id alone gives the defaults', () => {
  const result = fromEnv({ GCP_PROJECT_ID: 'my-project-1' });
  assert.deepEqual(result, {
    ok: true,
    value: { projectId: 'my-project-1', insecure: false, callTimeoutMs: 30_000 },
  });
});

test('GCP_PROJECT_ID is required', () => {
  const result = fromEnv({});
  assert.equal(result.ok, false);
  assert.deepEqual(!result.ok && result.missing, ['GCP_PROJECT_ID']);
});

test('an invalid project id is described by the rule, without echoing the value', () => {
  for (const bad of [
    'UPPER-case',
    'short',
    '1starts-with-digit',
    'ends-with-hyphen-',
    'a'.repeat(31),
    'has_underscore',
    'tok3n-SECRET',
  ]) {
    const result = fromEnv({ GCP_PROJECT_ID: bad });
    assert.equal(result.ok, false, bad);
    const message = result.ok ? '' : result.invalid.join('\n');
    assert.match(
      message,
      /^invalid environment variable GCP_PROJECT_ID: must be a GCP project id: 6-30 characters/,
    );
    assert.ok(!message.includes(bad), `message echoes ${bad}`);
  }
  for (const good of ['abcdef', 'a'.repeat(30), 'my-project-123'])
    assert.equal(fromEnv({ GCP_PROJECT_ID: good }).ok, true, good);
});

test('endpoint must be host:port', () => {
  for (const good of ['secretmanager.googleapis.com:443', '127.0.0.1:8085', 'localhost:1', '[::1]:65535']) {
    assert.equal(fromEnv({ GCP_PROJECT_ID: 'my-project', SECRET_MANAGER_ENDPOINT: good }).ok, true, good);
  }
  for (const bad of [
    '127.0.0.1',
    'https://host:443',
    'host:0',
    'host:65536',
    'host:port',
    '[zz]:1',
    'a b:1',
    ':443',
  ]) {
    const result = fromEnv({ GCP_PROJECT_ID: 'my-project', SECRET_MANAGER_ENDPOINT: bad });
    assert.equal(result.ok, false, bad);
    assert.match(result.ok ? '' : (result.invalid[0] ?? ''), /SECRET_MANAGER_ENDPOINT: must be host:port/);
  }
  assert.deepEqual(parseEndpoint('[::1]:8085'), { host: '[::1]', port: 8085 });
});

test('plaintext is allowed only with a loopback endpoint', () => {
  const ok = fromEnv({
    GCP_PROJECT_ID: 'my-project',
    SECRET_MANAGER_ENDPOINT: '127.0.0.1:9000',
    SECRET_MANAGER_INSECURE: 'true',
  });
  assert.deepEqual(ok, {
    ok: true,
    value: { projectId: 'my-project', endpoint: '127.0.0.1:9000', insecure: true, callTimeoutMs: 30_000 },
  });
  const refused = [
    { SECRET_MANAGER_INSECURE: 'true' },
    { SECRET_MANAGER_INSECURE: 'true', SECRET_MANAGER_ENDPOINT: 'secretmanager.googleapis.com:443' },
    { SECRET_MANAGER_INSECURE: 'true', SECRET_MANAGER_ENDPOINT: '10.0.0.1:8085' },
    { SECRET_MANAGER_INSECURE: 'true', SECRET_MANAGER_ENDPOINT: 'localhost.example.com:8085' },
  ];
  for (const env of refused) {
    const result = fromEnv({ GCP_PROJECT_ID: 'my-project', ...env });
    assert.equal(result.ok, false, JSON.stringify(env));
    assert.match(
      result.ok ? '' : (result.invalid[0] ?? ''),
      /SECRET_MANAGER_INSECURE: plaintext gRPC is only allowed together with SECRET_MANAGER_ENDPOINT on a loopback host/,
    );
  }
  const notBoolean = fromEnv({ GCP_PROJECT_ID: 'my-project', SECRET_MANAGER_INSECURE: 'yes' });
  assert.match(
    notBoolean.ok ? '' : (notBoolean.invalid[0] ?? ''),
    /SECRET_MANAGER_INSECURE: must be "true" or "false"/,
  );
  assert.equal(
    fromEnv({
      GCP_PROJECT_ID: 'my-project',
      SECRET_MANAGER_INSECURE: 'false',
      SECRET_MANAGER_ENDPOINT: '10.0.0.1:1',
    }).ok,
    true,
  );
});

test('loopback hosts', () => {
  for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '[::1]', '[0:0:0:0:0:0:0:1]'])
    assert.equal(isLoopbackHost(host), true, host);
  for (const host of ['10.0.0.1', '[::2]', 'example.com', '128.0.0.1', '[::ffff:10.0.0.1]', '0.0.0.0'])
    assert.equal(isLoopbackHost(host), false, host);
});

test('call timeout', () => {
  const parsed = fromEnv({ GCP_PROJECT_ID: 'my-project', GCP_CALL_TIMEOUT_MS: '1500' });
  assert.equal(parsed.ok && parsed.value.callTimeoutMs, 1500);
  for (const bad of ['0', '-1', '1.5', 'soon', '600001']) {
    const result = fromEnv({ GCP_PROJECT_ID: 'my-project', GCP_CALL_TIMEOUT_MS: bad });
    assert.match(
      result.ok ? '' : (result.invalid[0] ?? ''),
      /GCP_CALL_TIMEOUT_MS: must be a whole number of milliseconds/,
      bad,
    );
  }
});

test('a parsed config validates again, with an API call hook', () => {
  const hook = () => undefined;
  const parsed = gcpStoreConfigSchema.parse({
    projectId: 'my-project',
    endpoint: 'localhost:1',
    insecure: true,
    callTimeoutMs: 10,
    onApiCall: hook,
  });
  assert.equal(gcpStoreConfigSchema.parse(parsed).onApiCall, hook);
  assert.equal(gcpStoreConfigSchema.safeParse({ projectId: 'my-project', unknownKey: 1 }).success, false);
});
