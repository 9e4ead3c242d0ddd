import assert from 'node:assert/strict';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
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
    // Checked on every call (no time bound), to see the mtime rule alone.
    const source = createTokenSource(file, 'HyperFleet API', 0);
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

  it('looks at the file at most once per re-check interval; a 401 looks again at once', async () => {
    const file = join(dir, 'bounded');
    await writeFile(file, 'token-dddddddd\n');
    const source = createTokenSource(file, 'HyperFleet API', 60_000);
    // Concurrent first calls share one read.
    assert.deepEqual(await Promise.all([source.token(), source.token(), source.token()]), [
      'token-dddddddd',
      'token-dddddddd',
      'token-dddddddd',
    ]);
    // Rotated within the interval: not seen yet, and the file is not even looked at (a missing one does not fail).
    await writeFile(file, 'token-eeeeeeeeee\n');
    assert.equal(await source.token(), 'token-dddddddd');
    await rm(file);
    assert.equal(await source.token(), 'token-dddddddd');
    await writeFile(file, 'token-ffffffffff\n');
    source.invalidate();
    assert.equal(await source.token(), 'token-ffffffffff');
  });

  it('looks at the file again once the interval has passed', async () => {
    const file = join(dir, 'interval');
    await writeFile(file, 'token-gggggggg\n');
    const source = createTokenSource(file, 'HyperFleet API', 30);
    assert.equal(await source.token(), 'token-gggggggg');
    await writeFile(file, 'token-hhhhhhhhhh\n');
    await sleep(60);
    assert.equal(await source.token(), 'token-hhhhhhhhhh');
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
