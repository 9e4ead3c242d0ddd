import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseEnv } from '../../config/env.js';
import { localStoreFactory, StoreKey, type LocalStoreConfig } from './index.js';

const parse = (env: NodeJS.ProcessEnv) =>
  parseEnv(localStoreFactory.configSchema, localStoreFactory.env, env);

test('defaults: the store lives in .pull-secret/store under the working directory', async () => {
  const result = parse({});
  assert.ok(result.ok);
  assert.deepEqual(result.value, { dir: '.pull-secret/store' });
  const store = await localStoreFactory.create(result.value);
  assert.equal(store.kind, 'local');
  assert.equal(store.location, resolve('.pull-secret/store'));
  await store.close();
});

test('LOCAL_STORE_KEY must be base64 of 32 bytes; the error never echoes the value', () => {
  const bad = 'c2VjcmV0LXZhbHVlLXRoYXQtaXMtdG9vLXNob3J0';
  const result = parse({ LOCAL_STORE_KEY: bad });
  assert.equal(result.ok, false);
  if (result.ok) return;
  assert.equal(result.invalid.length, 1);
  assert.match(
    result.invalid[0] ?? '',
    /^invalid environment variable LOCAL_STORE_KEY: must be the base64 encoding of exactly 32 bytes/,
  );
  assert.ok(!JSON.stringify(result).includes(bad));
});

test('a valid LOCAL_STORE_KEY is parsed into a StoreKey that does not print', () => {
  const key = randomBytes(32);
  const result = parse({
    LOCAL_STORE_KEY: key.toString('base64'),
    LOCAL_STORE_DIR: '/srv/store',
    LOCAL_STORE_KEY_FILE: '/etc/k',
  });
  assert.ok(result.ok);
  const config: LocalStoreConfig = result.value;
  assert.ok(config.key instanceof StoreKey);
  assert.deepEqual(config.key.bytes(), key);
  assert.equal(config.dir, '/srv/store');
  assert.equal(config.keyFile, '/etc/k');
  assert.ok(!JSON.stringify(config).includes(key.toString('base64')));
});

test('the factory builds a store that uses the configured key and touches nothing until first use', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'local-store-config-'));
  try {
    const storeDir = join(dir, 'store');
    const result = parse({ LOCAL_STORE_DIR: storeDir, LOCAL_STORE_KEY: randomBytes(32).toString('base64') });
    assert.ok(result.ok);
    const store = await localStoreFactory.create(result.value);
    await assert.rejects(stat(storeDir), { code: 'ENOENT' });
    await store.createSecret('s1', { 'managed-by': 'hyperfleet' });
    await store.addVersion('s1', Buffer.from('x'));
    await assert.rejects(stat(join(storeDir, 'store.key')), { code: 'ENOENT' }, 'env key: no key file');
    await store.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('every env variable has help text and maps to a schema key', () => {
  assert.deepEqual(Object.keys(localStoreFactory.env).sort(), [
    'LOCAL_STORE_DIR',
    'LOCAL_STORE_KEY',
    'LOCAL_STORE_KEY_FILE',
  ]);
  for (const setting of Object.values(localStoreFactory.env)) assert.ok(setting.help.length > 10);
});
