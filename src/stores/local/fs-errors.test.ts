import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, chmod, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PullSecretError } from '../../errors/index.js';
import { classifyFsError } from './fs-errors.js';
import { LocalStore } from './local-store.js';

const sysErr = (code: string) => Object.assign(new Error(`${code}: something, open '/x'`), { code });

test('filesystem errors map to store codes with the path and the right retryability', () => {
  const cases: [string, string, boolean][] = [
    ['EACCES', 'STORE_PERMISSION_DENIED', false],
    ['EPERM', 'STORE_PERMISSION_DENIED', false],
    ['ENOSPC', 'STORE_UNAVAILABLE', true],
    ['EDQUOT', 'STORE_UNAVAILABLE', true],
    ['EIO', 'STORE_UNAVAILABLE', true],
    ['EAGAIN', 'STORE_UNAVAILABLE', true],
    ['EMFILE', 'STORE_UNAVAILABLE', true],
    ['EROFS', 'STORE_FAILED', false],
    ['ENOTDIR', 'STORE_FAILED', false],
    ['ESOMETHING', 'STORE_FAILED', false],
  ];
  for (const [errno, code, retryable] of cases) {
    const err = classifyFsError(sysErr(errno), 'write', '/srv/store/secrets/a.json');
    assert.ok(err instanceof PullSecretError);
    assert.equal(err.code, code, errno);
    assert.equal(err.retryable, retryable, errno);
    assert.ok(err.message.includes('/srv/store/secrets/a.json'), err.message);
    assert.ok(err.message.includes(errno), err.message);
  }
  assert.match(classifyFsError(sysErr('ENOSPC'), 'write', '/x').message, /no space left/);
  assert.equal(
    classifyFsError(
      Object.assign(new Error('aborted'), { name: 'AbortError', code: 'ABORT_ERR' }),
      'read',
      '/x',
    ).code,
    'ABORTED',
  );
  assert.equal(classifyFsError('not an error', 'read', '/x').code, 'STORE_FAILED');
  const passthrough = new PullSecretError('STORE_CORRUPT', 'bad');
  assert.equal(classifyFsError(passthrough, 'read', '/x'), passthrough);
});

test(
  'an unwritable store directory fails with STORE_PERMISSION_DENIED naming the path',
  { skip: process.getuid?.() === 0 ? 'root ignores file modes' : false },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'local-store-perm-'));
    try {
      await chmod(dir, 0o500);
      const store = new LocalStore({ dir: join(dir, 'store') });
      await assert.rejects(store.getSecret('s1'), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'STORE_PERMISSION_DENIED');
        assert.ok(err.message.includes(dir));
        return true;
      });
    } finally {
      await chmod(dir, 0o700);
      await rm(dir, { recursive: true, force: true });
    }
  },
);
