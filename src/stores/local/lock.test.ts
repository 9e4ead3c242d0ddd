import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { withLock } from './lock.js';

const LOCK_MODULE = pathToFileURL(join(import.meta.dirname, 'lock.ts')).href;
/** A process that takes the lock, says so, and holds it until it is killed. */
const HOLDER = `
const [moduleUrl, lockPath] = process.argv.slice(1);
const { withLock } = await import(moduleUrl);
await withLock(lockPath, { staleMs: 60000, waitMs: 1000 }, undefined, async () => {
  process.stdout.write('held\\n');
  await new Promise(() => setInterval(() => undefined, 1000));
});
`;

/** Starts a holder of `lockPath` and resolves once it holds the lock. */
async function startHolder(lockPath: string) {
  const child = spawn(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), '--input-type=module', '-e', HOLDER, LOCK_MODULE, lockPath],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = once(child, 'exit');
  let out = '';
  while (!out.includes('held')) {
    const [chunk] = (await Promise.race([once(child.stdout, 'data'), exited.then(() => [undefined])])) as [
      Buffer | undefined,
    ];
    if (chunk === undefined) throw new Error('the holder exited before it held the lock');
    out += chunk.toString();
  }
  return { child, exited };
}

/** Lock timing whose staleness timeout cannot help within the test: only a proven-dead owner lets a waiter in. */
const noStale = { staleMs: 60_000, waitMs: 1500 };

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
    await Promise.all(
      Array.from({ length: 25 }, () =>
        withLock(lockPath, { staleMs: 10_000, waitMs: 10_000 }, undefined, async (lock) => {
          inside++;
          assert.equal(inside, 1);
          const seen = counter;
          await sleep(1);
          lock.assertHeld();
          counter = seen + 1;
          inside--;
        }),
      ),
    );
    assert.equal(counter, 25);
    await assert.rejects(stat(lockPath), { code: 'ENOENT' });
  });
});

test('errors inside the section release the lock', async () => {
  await withDir(async (dir) => {
    const lockPath = join(dir, 'a.lock');
    await assert.rejects(
      withLock(lockPath, fast, undefined, () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.equal(await withLock(lockPath, fast, undefined, () => Promise.resolve('next')), 'next');
  });
});

test('a lock held elsewhere fails with a retryable STORE_CONFLICT after waitMs', async () => {
  await withDir(async (dir) => {
    const lockPath = join(dir, 'a.lock');
    await mkdir(lockPath);
    await assert.rejects(
      withLock(lockPath, fast, undefined, () => Promise.resolve()),
      (err: Error & { code?: string; retryable?: boolean }) => {
        assert.equal(err.code, 'STORE_CONFLICT');
        assert.equal(err.retryable, true);
        return true;
      },
    );
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
    await assert.rejects(
      withLock(lockPath, { staleMs: 10_000, waitMs: 10_000 }, controller.signal, () => Promise.resolve()),
      { code: 'ABORTED' },
    );
    assert.ok(Date.now() - started < 5000);
    await assert.rejects(
      withLock(lockPath, fast, AbortSignal.abort(), () => Promise.resolve()),
      { code: 'ABORTED' },
    );
  });
});

test('a lock whose holder was killed on this host is taken over at once, without waiting for staleness', async () => {
  await withDir(async (dir) => {
    const lockPath = join(dir, 'a.lock');
    const holder = await startHolder(lockPath);
    const owner = JSON.parse(await readFile(join(lockPath, 'owner.json'), 'utf8')) as { pid: number };
    assert.equal(owner.pid, holder.child.pid, 'the lock records its holder');
    holder.child.kill('SIGKILL');
    await holder.exited;
    assert.equal(await withLock(lockPath, noStale, undefined, () => Promise.resolve('taken')), 'taken');
    await assert.rejects(stat(lockPath), { code: 'ENOENT' });
  });
});

test('a lock whose holder is alive, or lives on another host, is not taken over', async () => {
  await withDir(async (dir) => {
    const lockPath = join(dir, 'a.lock');
    const holder = await startHolder(lockPath);
    try {
      await assert.rejects(
        withLock(lockPath, { ...noStale, waitMs: 300 }, undefined, () => Promise.resolve()),
        { code: 'STORE_CONFLICT' },
      );
    } finally {
      holder.child.kill('SIGKILL');
      await holder.exited;
    }
    // The same dead PID, recorded by another host: not a proof that the holder is gone.
    await writeFile(
      join(lockPath, 'owner.json'),
      JSON.stringify({ host: 'another-host|pid:[1]', pid: holder.child.pid }),
    );
    await assert.rejects(
      withLock(lockPath, { ...noStale, waitMs: 300 }, undefined, () => Promise.resolve()),
      { code: 'STORE_CONFLICT' },
    );
  });
});
