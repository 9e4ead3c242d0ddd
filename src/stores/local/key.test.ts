import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { StoreKey, decodeKeyBase64, keyId, loadOrCreateKeyFile } from './key.js';

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'local-store-key-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('decodeKeyBase64 accepts only padded base64 of exactly 32 bytes', () => {
  const key = randomBytes(32);
  assert.deepEqual(decodeKeyBase64(key.toString('base64')), key);
  assert.deepEqual(decodeKeyBase64(` ${key.toString('base64')}\n`), key);
  assert.equal(decodeKeyBase64(randomBytes(31).toString('base64')), undefined);
  assert.equal(decodeKeyBase64(randomBytes(33).toString('base64')), undefined);
  assert.equal(decodeKeyBase64(key.toString('base64').replace(/=$/, '')), undefined);
  assert.equal(decodeKeyBase64(key.toString('hex')), undefined);
  assert.equal(
    decodeKeyBase64(`${key.toString('base64').slice(0, 20)}!${key.toString('base64').slice(20)}`),
    undefined,
  );
});

test('StoreKey never prints its bytes', () => {
  const bytes = randomBytes(32);
  const key = new StoreKey(bytes);
  const b64 = bytes.toString('base64');
  for (const shown of [JSON.stringify({ key }), String(key), inspect({ key }), `${key.toString()}`])
    assert.ok(!shown.includes(b64), shown);
  assert.deepEqual(key.bytes(), bytes);
  assert.throws(() => new StoreKey(randomBytes(16)), { code: 'CONFIG_INVALID' });
});

test('keyId is stable per key and differs between keys', () => {
  const key = randomBytes(32);
  assert.equal(keyId(key), keyId(Buffer.from(key)));
  assert.notEqual(keyId(key), keyId(randomBytes(32)));
  assert.match(keyId(key), /^[0-9a-f]{16}$/);
});

test('a missing key file is generated once (mode 0600, base64) and read back; parent dirs are created', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'nested', 'store.key');
    const key = await loadOrCreateKeyFile(path);
    assert.equal(key.length, 32);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.deepEqual(Buffer.from((await readFile(path, 'utf8')).trim(), 'base64'), key);
    assert.deepEqual(await loadOrCreateKeyFile(path), key);
    assert.deepEqual(await readdir(join(dir, 'nested')), ['store.key'], 'no staging file left');
  });
});

test('callers racing to create the key file all get the same key', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'store.key');
    const keys = await Promise.all(Array.from({ length: 20 }, () => loadOrCreateKeyFile(path)));
    for (const key of keys) assert.deepEqual(key, keys[0]);
  });
});

test('a key file with 32 raw bytes is accepted', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'raw.key');
    const key = randomBytes(32);
    await writeFile(path, key, { mode: 0o600 });
    assert.deepEqual(await loadOrCreateKeyFile(path), key);
  });
});

test('a key file open to group or others is refused, naming the path and chmod 600', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'store.key');
    await writeFile(path, randomBytes(32).toString('base64'), { mode: 0o600 });
    for (const mode of [0o644, 0o640, 0o604, 0o660]) {
      await chmod(path, mode);
      await assert.rejects(loadOrCreateKeyFile(path), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'CONFIG_INVALID');
        assert.ok(err.message.includes(`chmod 600 ${path}`), err.message);
        assert.ok(err.message.includes(`mode 0${mode.toString(8)}`), err.message);
        return true;
      });
    }
    await chmod(path, 0o400);
    assert.equal((await loadOrCreateKeyFile(path)).length, 32);
  });
});

test('a key file that holds no key is refused without echoing its content', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'store.key');
    await writeFile(path, 'hunter2-not-a-key\n', { mode: 0o600 });
    await assert.rejects(loadOrCreateKeyFile(path), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.ok(!err.message.includes('hunter2'));
      return true;
    });
    await assert.rejects(loadOrCreateKeyFile(dir), { code: 'CONFIG_INVALID', message: /not a regular file/ });
  });
});
