import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeFileAtomic } from './atomic-file.js';
import { fileIdentity, ParsedFileCache } from './parsed-file-cache.js';

describe('ParsedFileCache', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'parsed-cache-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  it('hits only for the file version it was given, and the identity writeFileAtomic returns is the published file', async () => {
    const path = join(dir, 'a.json');
    const cache = new ParsedFileCache<{ n: number }>(10);
    const written = await writeFileAtomic(path, '{"n":1}');
    assert.deepEqual(written, fileIdentity(path));
    cache.set(path, written, { n: 1 });
    assert.deepEqual(cache.get(path, fileIdentity(path)), { n: 1 });

    await writeFile(path, '{"n":22}'); // edited in place: same inode, other size
    assert.equal(cache.get(path, fileIdentity(path)), undefined);
    await writeFileAtomic(path, '{"n":1}'); // replaced: other inode
    assert.equal(cache.get(path, fileIdentity(path)), undefined);
    assert.equal(cache.get(join(dir, 'missing'), fileIdentity(join(dir, 'missing'))), undefined);
  });

  it('freezes what it holds and drops the oldest entry past its bound', () => {
    const cache = new ParsedFileCache<{ list: number[] }>(2);
    const id = { ino: 1, size: 1, mtimeMs: 1 };
    const value = cache.set('a', id, { list: [1] });
    assert.throws(() => value.list.push(2), TypeError);
    cache.set('b', id, { list: [2] });
    cache.set('c', id, { list: [3] });
    assert.equal(cache.get('a', id), undefined);
    assert.deepEqual(cache.get('c', id), { list: [3] });
  });
});

describe('ParsedFileCache.load', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'parsed-load-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  it('parses once while the file is unchanged, again after it changes; a missing file is undefined', async () => {
    const path = join(dir, 'b.json');
    const cache = new ParsedFileCache<{ n: number }>(10);
    let parses = 0;
    const parse = (raw: Buffer) => {
      parses++;
      return JSON.parse(raw.toString('utf8')) as { n: number };
    };
    assert.equal(await cache.load(path, parse), undefined);
    await writeFile(path, '{"n":1}');
    assert.deepEqual(await cache.load(path, parse), { n: 1 });
    assert.deepEqual(await cache.load(path, parse), { n: 1 });
    assert.equal(parses, 1);
    await writeFile(path, '{"n":22}');
    assert.deepEqual(await cache.load(path, parse), { n: 22 });
    assert.equal(parses, 2);
    await rm(path);
    assert.equal(await cache.load(path, parse), undefined);
  });

  it('reads a file larger than the synchronous bound too, and passes on filesystem errors', async () => {
    const path = join(dir, 'big.json');
    await writeFile(path, JSON.stringify({ n: 'x'.repeat(100_000) }));
    const cache = new ParsedFileCache<{ n: string }>(10);
    assert.equal(
      (await cache.load(path, (raw) => JSON.parse(raw.toString('utf8')) as { n: string }))?.n.length,
      100_000,
    );
    await assert.rejects(
      cache.load(dir, () => ({ n: '' })),
      { code: 'EISDIR' },
    );
  });
});
