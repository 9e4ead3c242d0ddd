import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { readdir, readFile, rm, rmdir, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { errnoCode } from './fs-errors.js';

/**
 * Who holds a lock: a small JSON file inside the lock directory, written by the holder right after
 * the `mkdir` that took the lock (before proper-lockfile first sets the directory's mtime, so the
 * holder's own mtime check is not disturbed). It lives and dies with that one lock directory, so it
 * can never describe another holder's lock.
 *
 * It lets a waiter prove the holder is gone: same host (hostname and PID namespace, so containers
 * sharing a hostname but not their processes never count as "same host") and that PID no longer
 * running. Anything less (another host, a PID alive, no owner file yet) is not a proof, and the
 * waiter falls back to proper-lockfile's staleness timeout.
 */

const OWNER_FILE = 'owner.json';
/** Released lock directories are renamed to `.{name}.{random}.released` first, then emptied and removed. */
const RELEASED = /^\..+\.released$/;
/** A takeover marker older than this was left by a waiter that crashed mid-takeover. */
const TAKEOVER_STALE_MS = 5_000;

/** One host's identity: its hostname plus this process's PID namespace (Linux), stable for the process. */
const HOST = `${hostname()}|${pidNamespace()}`;

interface Owner {
  host: string;
  pid: number;
}

function pidNamespace(): string {
  try {
    return fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    return '';
  }
}

/** True unless the OS says no process has this PID (EPERM: it exists, under another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) !== 'ESRCH';
  }
}

type Callback = (err: NodeJS.ErrnoException | null) => void;

/**
 * Removes a lock directory in one atomic step, a rename to a private name (then empties and removes
 * that): a process killed while releasing leaves a harmless `.released` directory, never a lock
 * without its owner file that others would have to wait out.
 */
function removeLockDir(path: string, callback: Callback): void {
  const released = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.released`);
  fs.rename(path, released, (err) => {
    if (err) return callback(err);
    fs.unlink(join(released, OWNER_FILE), () => fs.rmdir(released, () => callback(null)));
  });
}

/**
 * Removes `.released` directories older than `maxAgeMs` left in `dir` by processes killed while
 * releasing a lock. Best effort; returns how many were removed.
 */
export async function removeReleasedLocks(dir: string, maxAgeMs: number): Promise<number> {
  let removed = 0;
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((n) => RELEASED.test(n))) {
    const path = join(dir, name);
    try {
      if ((await stat(path)).mtimeMs < Date.now() - maxAgeMs) {
        await rm(path, { recursive: true, force: true });
        removed += 1;
      }
    } catch {
      // Removed by another process first.
    }
  }
  return removed;
}

/**
 * The `fs` proper-lockfile uses, with the owner file added: `mkdir` of a lock directory also writes
 * the owner file into it (the lock is taken either way; a missing owner file only means no one can
 * prove this holder dead: a kill between the two calls leaves the lock to the staleness timeout),
 * and `rmdir` removes the directory with its owner file (`removeLockDir`).
 */
export const lockFs = {
  ...fs,
  mkdir(path: string, callback: Callback): void {
    fs.mkdir(path, (err) => {
      if (err) return callback(err);
      // Synchronously, in the same tick as the mkdir's completion: the window in which a kill leaves a
      // lock without its owner file shrinks to a few system calls.
      try {
        fs.writeFileSync(
          join(path, OWNER_FILE),
          JSON.stringify({ host: HOST, pid: process.pid } satisfies Owner),
          { mode: 0o600 },
        );
      } catch {
        // The lock is held all the same; only its holder cannot be proven dead.
      }
      callback(null);
    });
  },
  rmdir(path: string, callback: Callback): void {
    removeLockDir(path, callback);
  },
};

async function readOwner(lockPath: string): Promise<Owner | undefined> {
  try {
    const parsed = JSON.parse(await readFile(join(lockPath, OWNER_FILE), 'utf8')) as Partial<Owner>;
    return typeof parsed.host === 'string' && Number.isSafeInteger(parsed.pid)
      ? { host: parsed.host, pid: parsed.pid as number }
      : undefined;
  } catch {
    return undefined;
  }
}

function provablyGone(owner: Owner | undefined): owner is Owner {
  return owner !== undefined && owner.host === HOST && owner.pid !== process.pid && !isAlive(owner.pid);
}

/**
 * Removes the lock at `lockPath` when its holder is provably gone; true when it did (the caller then
 * takes the lock as usual). Removal happens under a takeover marker (`{lockPath}.takeover`, an
 * exclusive `mkdir`) and re-checks the owner there, so two waiters cannot both remove a lock and
 * the second remove the one the first has just taken. Best effort: any failure answers false.
 */
export async function takeOverIfOwnerGone(lockPath: string): Promise<boolean> {
  if (!provablyGone(await readOwner(lockPath))) return false;
  const marker = `${lockPath}.takeover`;
  try {
    await fs.promises.mkdir(marker);
  } catch (err) {
    if (errnoCode(err) === 'EEXIST') await clearStaleMarker(marker);
    return false;
  }
  try {
    if (!provablyGone(await readOwner(lockPath))) return false;
    await new Promise<void>((resolve, reject) =>
      removeLockDir(lockPath, (err) => (err ? reject(err) : resolve())),
    );
    return true;
  } catch {
    return false;
  } finally {
    await rmdir(marker).catch(() => undefined);
  }
}

async function clearStaleMarker(marker: string): Promise<void> {
  try {
    if ((await stat(marker)).mtimeMs < Date.now() - TAKEOVER_STALE_MS) await rmdir(marker);
  } catch {
    // Gone already, or removed by another waiter.
  }
}
