import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat, utimes } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withLock } from './lock.js';

const fast = { staleMs: 2000, waitMs: 300 };

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'local-store-lock-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('critical sections on one lock never overlap; the lock is gone afterwards', async () => {
  await withDir(async (dir) => {
    const lockPath = join(dir, 'a.lock');
    let inside = 0;
    let counter = 0;
    await Promise.all(Array.from({ length: 25 }, () => withLock(lockPath, { staleMs: 10_000, waitMs: 10_000 }, undefined, async (lock) => {
      inside++;
      assert.equal(inside, 1);
      const seen = counter;
      await sleep(1);
      lock.assertHeld();
      counter = seen + 1;
      inside--;
    })));
    assert.equal(counter, 25);
    await assert.rejects(stat(lockPath), { code: 'ENOENT' });
  });
});

test('errors inside the section release the lock', async () => {
  await withDir(async (dir) => {
    const lockPath = join(dir, 'a.lock');
    await assert.rejects(withLock(lockPath, fast, undefined, () => Promise.reject(new Error('boom'))), /boom/);
    assert.equal(await withLock(lockPath, fast, undefined, () => Promise.resolve('next')), 'next');
  });
});

test('a lock held elsewhere fails with a retryable STORE_CONFLICT after waitMs', async () => {
  await withDir(async (dir) => {
    const lockPath = join(dir, 'a.lock');
    await mkdir(lockPath);
    await assert.rejects(withLock(lockPath, fast, undefined, () => Promise.resolve()), (err: Error & { code?: string; retryable?: boolean }) => {
      assert.equal(err.code, 'STORE_CONFLICT');
      assert.equal(err.retryable, true);
      return true;
    });
  });
});

test('a stale lock left by a crashed process is taken over', async () => {
  await withDir(async (dir) => {
    const lockPath = join(dir, 'a.lock');
    await mkdir(lockPath);
    const past = new Date(Date.now() - 60_000);
    await utimes(lockPath, past, past);
    assert.equal(await withLock(lockPath, fast, undefined, () => Promise.resolve('taken')), 'taken');
  });
});

test('an abort while waiting ends the wait with ABORTED', async () => {
  await withDir(async (dir) => {
    const lockPath = join(dir, 'a.lock');
    await mkdir(lockPath);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    await assert.rejects(withLock(lockPath, { staleMs: 10_000, waitMs: 10_000 }, controller.signal, () => Promise.resolve()), { code: 'ABORTED' });
    assert.ok(Date.now() - started < 5000);
    await assert.rejects(withLock(lockPath, fast, AbortSignal.abort(), () => Promise.resolve()), { code: 'ABORTED' });
  });
});
