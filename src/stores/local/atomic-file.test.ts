import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PullSecretError } from '../../errors/index.js';
import { removeFileDurable, removeStaleTempFiles, writeFileAtomic } from './atomic-file.js';

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'local-store-atomic-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('writeFileAtomic creates and replaces a 0600 file and leaves no temp file', async () => {
  await withDir(async (dir) => {
    const target = join(dir, 'a.json');
    await writeFileAtomic(target, 'first');
    await writeFileAtomic(target, Buffer.from('second'));
    assert.equal(await readFile(target, 'utf8'), 'second');
    assert.equal((await stat(target)).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(dir), ['a.json']);
  });
});

test('a write refused right before commit leaves the old file untouched and cleans its temp file', async () => {
  await withDir(async (dir) => {
    const target = join(dir, 'a.json');
    await writeFileAtomic(target, 'old');
    const refusal = new PullSecretError('STORE_CONFLICT', 'lock lost');
    await assert.rejects(
      writeFileAtomic(target, 'new', {
        beforeCommit: () => {
          throw refusal;
        },
      }),
      (err) => err === refusal,
    );
    assert.equal(await readFile(target, 'utf8'), 'old');
    assert.deepEqual(await readdir(dir), ['a.json']);
  });
});

test('a reader sees the old or the new content while writes race, never a torn file', async () => {
  await withDir(async (dir) => {
    const target = join(dir, 'a.json');
    const versions = Array.from({ length: 30 }, (_, i) => JSON.stringify({ i, pad: 'x'.repeat(20_000 + i) }));
    await writeFileAtomic(target, versions[0] ?? '');
    let reads = 0;
    const writer = (async () => {
      for (const v of versions) await writeFileAtomic(target, v);
    })();
    let done = false;
    void writer.then(() => (done = true));
    while (!done) {
      const content = await readFile(target, 'utf8');
      assert.ok(versions.includes(content), 'content is one complete version');
      reads++;
    }
    await writer;
    assert.ok(reads > 0);
  });
});

test('write errors are classified: a missing directory is not a raw Node error', async () => {
  await withDir(async (dir) => {
    await assert.rejects(
      writeFileAtomic(join(dir, 'missing', 'a.json'), 'x'),
      (err) => err instanceof PullSecretError && err.code === 'STORE_FAILED',
    );
    await writeFile(join(dir, 'file'), 'x');
    await assert.rejects(writeFileAtomic(join(dir, 'file', 'a.json'), 'x'), {
      code: 'STORE_FAILED',
      message: /ENOTDIR/,
    });
  });
});

test('removeFileDurable treats a missing file as a normal answer', async () => {
  await withDir(async (dir) => {
    const target = join(dir, 'a.json');
    assert.equal(await removeFileDurable(target), false);
    await writeFileAtomic(target, 'x');
    assert.equal(await removeFileDurable(target), true);
    assert.deepEqual(await readdir(dir), []);
  });
});

test('removeStaleTempFiles removes only old temp files', async () => {
  await withDir(async (dir) => {
    const old = join(dir, '.a.json.1-00.tmp');
    const fresh = join(dir, '.a.json.2-00.tmp');
    for (const f of [old, fresh, join(dir, 'a.json'), join(dir, 'old.tmp')]) await writeFile(f, 'x');
    const past = new Date(Date.now() - 120_000);
    await utimes(old, past, past);
    await utimes(join(dir, 'old.tmp'), past, past);
    assert.equal(await removeStaleTempFiles(dir, 60_000), 1);
    assert.deepEqual((await readdir(dir)).sort(), ['.a.json.2-00.tmp', 'a.json', 'old.tmp']);
    assert.equal(await removeStaleTempFiles(join(dir, 'missing'), 0), 0);
  });
});
