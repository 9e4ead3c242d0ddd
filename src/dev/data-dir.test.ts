import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareDataDir } from './data-dir.js';

it('creates and marks the data directory; clears only a marked one', async () => {
  const root = await mkdtemp(join(tmpdir(), 'ps-data-dir-'));
  try {
    const dir = join(root, 'dev');
    const paths = await prepareDataDir(dir, { fresh: true });
    assert.equal(paths.apiState, join(dir, 'api-state.json'));
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    await writeFile(paths.apiState, '{}');
    await prepareDataDir(dir, { fresh: false });
    assert.ok((await readdir(dir)).includes('api-state.json'), 'kept without fresh');
    await prepareDataDir(dir, { fresh: true });
    assert.deepEqual(await readdir(dir), ['.pull-secret-dev'], 'cleared with fresh');

    const foreign = join(root, 'someone-elses');
    await mkdir(foreign);
    await writeFile(join(foreign, 'thesis.tex'), 'precious');
    await assert.rejects(prepareDataDir(foreign, { fresh: true }), {
      code: 'CONFIG_INVALID',
      message: /refusing to clear .*someone-elses/,
    });
    assert.deepEqual(await readdir(foreign), ['thesis.tex']);
    await assert.rejects(prepareDataDir(join(foreign, 'thesis.tex'), { fresh: false }), {
      code: 'CONFIG_INVALID',
    });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
