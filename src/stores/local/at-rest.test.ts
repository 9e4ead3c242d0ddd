import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalStore } from './local-store.js';
import { fileStem } from './secret-record.js';

const LABELS = { 'managed-by': 'hyperfleet', 'cluster-id': 'cls-1' };
const ID = 'hyperfleet-cls-1-pull-secret';

async function withStore(fn: (store: LocalStore, dir: string) => Promise<void>, key?: Buffer): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'local-store-'));
  const store = new LocalStore({ dir, key });
  try {
    await fn(store, dir);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

function recordFile(dir: string, id = ID): string {
  return join(dir, 'secrets', `${fileStem(id)}.json`);
}

test('payloads are encrypted at rest: no file in the store holds the plaintext', async () => {
  await withStore(async (store, dir) => {
    const canary = Buffer.from(
      `{"auths":{"quay.io":{"auth":"${Buffer.from('canary-user:canary-pass-7f3a').toString('base64')}"}}}`,
    );
    await store.createSecret(ID, LABELS);
    await store.addVersion(ID, canary);
    await store.addVersion(ID, canary);
    const needles = [
      canary,
      Buffer.from('canary-pass-7f3a'),
      Buffer.from(canary.toString('base64')),
      Buffer.from(canary.toString('hex')),
    ];
    const files = await filesUnder(dir);
    assert.ok(files.length >= 2, 'record and key file exist');
    for (const file of files) {
      const content = await readFile(file);
      for (const needle of needles)
        assert.equal(content.includes(needle), false, `${file} leaks the payload`);
    }
    assert.deepEqual((await store.accessVersion(ID, '2')).data, canary);
  });
});

test('tampering is detected as STORE_CORRUPT without echoing data', async () => {
  await withStore(async (store, dir) => {
    await store.createSecret(ID, LABELS);
    await store.addVersion(ID, Buffer.from('secret-one'));
    await store.addVersion(ID, Buffer.from('secret-two'));
    const path = recordFile(dir);
    const original = await readFile(path, 'utf8');
    const record = JSON.parse(original) as { versions: { payload: string }[] };
    const [first, second] = record.versions;
    assert.ok(first && second);

    // A flipped ciphertext bit.
    const bytes = Buffer.from(second.payload, 'base64');
    bytes[14] = (bytes[14] ?? 0) ^ 0x01;
    second.payload = bytes.toString('base64');
    await writeFile(path, JSON.stringify(record));
    await assert.rejects(store.accessLatestEnabled(ID), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'STORE_CORRUPT');
      assert.match(err.message, /version 2 of secret .*modified or the store key is wrong/);
      assert.doesNotMatch(err.message, /secret-two/);
      return true;
    });

    // Version 1's ciphertext moved to version 2: authenticated data no longer matches.
    second.payload = first.payload;
    await writeFile(path, JSON.stringify(record));
    await assert.rejects(store.accessVersion(ID, '2'), { code: 'STORE_CORRUPT' });
    assert.equal((await store.accessVersion(ID, '1')).data.toString(), 'secret-one');

    // A whole record copied to another secret's file.
    const otherId = 'hyperfleet-cls-2-pull-secret';
    await store.createSecret(otherId, LABELS);
    await store.addVersion(otherId, Buffer.from('other'));
    const other = JSON.parse(await readFile(recordFile(dir, otherId), 'utf8')) as {
      versions: { payload: string }[];
    };
    const stolen = JSON.parse(original) as { versions: { payload: string }[] };
    assert.ok(other.versions[0] && stolen.versions[0]);
    other.versions[0].payload = stolen.versions[0].payload;
    await writeFile(recordFile(dir, otherId), JSON.stringify(other));
    await assert.rejects(store.accessVersion(otherId, '1'), { code: 'STORE_CORRUPT' });

    await writeFile(path, '{"format":1,"id":');
    await assert.rejects(store.getSecret(ID), { code: 'STORE_CORRUPT', message: /not valid JSON/ });
    await writeFile(path, original.replace(`"id": "${ID}"`, '"id": "someone-else"'));
    await assert.rejects(store.getSecret(ID), {
      code: 'STORE_CORRUPT',
      message: /holds secret "someone-else"/,
    });
    await rm(path);
    await mkdir(path);
    await assert.rejects(store.getSecret(ID), { code: 'STORE_FAILED', message: /EISDIR/ });
  });
});

test('a wrong key is reported as STORE_CORRUPT naming the key settings', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'local-store-'));
  try {
    const writer = new LocalStore({ dir, key: randomBytes(32) });
    await writer.createSecret(ID, LABELS);
    await writer.addVersion(ID, Buffer.from('data'));
    const reader = new LocalStore({ dir, key: randomBytes(32) });
    assert.deepEqual((await reader.getSecret(ID))?.labels, LABELS, 'metadata is readable without the key');
    await assert.rejects(reader.accessLatestEnabled(ID), {
      code: 'STORE_CORRUPT',
      message: /another store key.*LOCAL_STORE_KEY/,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a key given directly is used and no key file is written', async () => {
  const key = randomBytes(32);
  await withStore(async (store, dir) => {
    await store.createSecret(ID, LABELS);
    await store.addVersion(ID, Buffer.from('data'));
    await assert.rejects(stat(join(dir, 'store.key')), { code: 'ENOENT' });
    const again = new LocalStore({ dir, key });
    assert.equal((await again.accessLatestEnabled(ID))?.data.toString(), 'data');
  }, key);
  assert.throws(() => new LocalStore({ dir: '.', key: randomBytes(16) }), { code: 'CONFIG_INVALID' });
});

test('without a key, a 0600 key file is generated on first use and reused', async () => {
  await withStore(async (store, dir) => {
    await assert.rejects(stat(dir + '/secrets'), { code: 'ENOENT' }, 'nothing on disk before the first call');
    await store.createSecret(ID, LABELS);
    await store.addVersion(ID, Buffer.from('data'));
    const info = await stat(join(dir, 'store.key'));
    assert.equal(info.mode & 0o777, 0o600);
    assert.equal(Buffer.from((await readFile(join(dir, 'store.key'), 'utf8')).trim(), 'base64').length, 32);
    const again = new LocalStore({ dir });
    assert.equal((await again.accessLatestEnabled(ID))?.data.toString(), 'data');
  });
});

test('a key file readable by others is refused with the chmod fix; the store works once fixed', async () => {
  await withStore(async (store, dir) => {
    const keyFile = join(dir, 'store.key');
    await writeFile(keyFile, `${randomBytes(32).toString('base64')}\n`);
    await chmod(keyFile, 0o644);
    await assert.rejects(store.getSecret(ID), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.ok(err.message.includes(keyFile));
      assert.ok(err.message.includes(`chmod 600 ${keyFile}`));
      assert.match(err.message, /mode 0644/);
      return true;
    });
    await chmod(keyFile, 0o600);
    assert.equal(await store.getSecret(ID), undefined);
  });
});

test('crash leftovers: a torn temp file is ignored, old ones are cleaned at start-up', async () => {
  await withStore(async (store, dir) => {
    await store.createSecret(ID, LABELS);
    await store.addVersion(ID, Buffer.from('committed'));
    // What a writer killed between write and rename leaves behind: a half-written temp file.
    const fresh = join(dir, 'secrets', `.${fileStem(ID)}.json.999999-deadbeef.tmp`);
    const old = join(dir, 'secrets', `.${fileStem(ID)}.json.999998-cafebabe.tmp`);
    await writeFile(fresh, '{"format":1,"id":"hyperfl');
    await writeFile(old, '{"format":1,');
    const hourAgo = new Date(Date.now() - 3600_000);
    await utimes(old, hourAgo, hourAgo);

    assert.equal((await store.accessLatestEnabled(ID))?.data.toString(), 'committed');
    assert.equal((await store.addVersion(ID, Buffer.from('next'))).version, '2');

    const restarted = new LocalStore({ dir });
    assert.equal((await restarted.accessLatestEnabled(ID))?.data.toString(), 'next');
    const left = await readdir(join(dir, 'secrets'));
    assert.ok(!left.includes(old.split('/').pop() ?? ''), 'old temp file removed');
    assert.ok(
      left.includes(fresh.split('/').pop() ?? ''),
      'recent temp file kept: it may belong to a live writer',
    );
    assert.deepEqual(
      left.filter((n) => !n.endsWith('.tmp')),
      [`${fileStem(ID)}.json`],
    );
  });
});

test('store files are private (0600) and no lock is left behind', async () => {
  await withStore(async (store, dir) => {
    await store.createSecret(ID, LABELS);
    await store.addVersion(ID, Buffer.from('x'));
    assert.equal((await stat(recordFile(dir))).mode & 0o777, 0o600);
    assert.equal((await stat(dir + '/secrets')).mode & 0o777, 0o700);
    assert.deepEqual(await readdir(join(dir, 'locks')), []);
  });
});
