import assert from 'node:assert/strict';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PullSecretError } from '../errors/index.js';
import { redactor } from '../pullsecret/redact.js';
import { createTokenSource } from './token-source.js';

function isCode(code: string) {
  return (err: unknown) => err instanceof PullSecretError && err.code === code;
}

describe('token file', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hf-token-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('no file: no token', async () => {
    assert.equal(await createTokenSource(undefined).token(), undefined);
  });

  it('caches until the mtime changes, then reads the rotated token', async () => {
    const file = join(dir, 'token');
    await writeFile(file, 'token-aaaaaaaa\n');
    // Whole seconds, so restoring the mtime below gives exactly the same value.
    const atime = new Date(1_700_000_000_000);
    const mtime = new Date(1_700_000_000_000);
    await utimes(file, atime, mtime);
    const source = createTokenSource(file);
    assert.equal(await source.token(), 'token-aaaaaaaa');
    // Same size, same mtime: the cached token is used (only a stat per request).
    await writeFile(file, 'token-bbbbbbbb\n');
    await utimes(file, atime, mtime);
    assert.equal(await source.token(), 'token-aaaaaaaa');
    await utimes(file, atime, new Date(mtime.getTime() + 5_000));
    assert.equal(await source.token(), 'token-bbbbbbbb');
    // After a 401 the cache is dropped, whatever the mtime says.
    await writeFile(file, 'token-cccccccc\n');
    await utimes(file, atime, new Date(mtime.getTime() + 5_000));
    source.invalidate();
    assert.equal(await source.token(), 'token-cccccccc');
  });

  it('registers the token with the redactor', async () => {
    const file = join(dir, 'redacted');
    await writeFile(file, 'zz-secret-token-42');
    await createTokenSource(file).token();
    assert.equal(redactor.redact('Bearer zz-secret-token-42'), 'Bearer [REDACTED]');
  });

  it('a missing, empty or multi-line file is a configuration error', async () => {
    await assert.rejects(createTokenSource(join(dir, 'missing')).token(), isCode('CONFIG_INVALID'));
    await writeFile(join(dir, 'empty'), '  \n');
    await assert.rejects(createTokenSource(join(dir, 'empty')).token(), isCode('CONFIG_INVALID'));
    await writeFile(join(dir, 'two'), 'abc\ndef\n');
    await assert.rejects(createTokenSource(join(dir, 'two')).token(), /one token/);
  });
});
