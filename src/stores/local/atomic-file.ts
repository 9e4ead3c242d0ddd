import { randomBytes } from 'node:crypto';
import { open, readFile, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { classifyFsError, errnoCode } from './fs-errors.js';

/** Temp files are dot-files ending in `.tmp`, so no store file name can be mistaken for one. */
const TEMP_FILE = /^\..+\.tmp$/;

/** Options of `writeFileAtomic`. */
export interface AtomicWriteOptions {
  /** File mode of the new file (before umask). Default 0600: store files are nobody else's business. */
  mode?: number;
  /**
   * Runs after the data is durable in the temp file and right before the rename that publishes it;
   * throwing aborts the write and leaves the old file in place (used to re-check lock ownership).
   */
  beforeCommit?: () => void;
}

/**
 * Replaces `target` with `data` crash-safely: write a uniquely named temp file in the same directory,
 * fsync it, rename it over the target, fsync the directory. A crash at any point leaves the old file
 * or the new one, never a torn one; at worst an orphaned temp file, which readers never open and
 * `removeStaleTempFiles` cleans up.
 *
 * @throws PullSecretError classified from the filesystem error (see `classifyFsError`).
 */
export async function writeFileAtomic(target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const dir = dirname(target);
  const temp = join(dir, `.${basename(target)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'wx', options.mode ?? 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    options.beforeCommit?.();
    await rename(temp, target);
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw classifyFsError(err, 'write', target);
  }
  await syncDirectory(dir);
}

/**
 * Deletes `target` and makes the deletion durable. Returns false when it did not exist.
 * @throws PullSecretError classified from the filesystem error.
 */
export async function removeFileDurable(target: string): Promise<boolean> {
  try {
    await unlink(target);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return false;
    throw classifyFsError(err, 'delete', target);
  }
  await syncDirectory(dirname(target));
  return true;
}

/**
 * Reads a whole file; `undefined` when it does not exist.
 * @throws PullSecretError classified from any other filesystem error.
 */
export async function readFileIfExists(target: string): Promise<Buffer | undefined> {
  try {
    return await readFile(target);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw classifyFsError(err, 'read', target);
  }
}

/**
 * Removes temp files left in `dir` by writers that crashed, if older than `maxAgeMs` (a live writer
 * publishes or removes its temp file within moments, so only orphans are that old). Best effort:
 * a file that vanishes meanwhile, or cannot be removed, is skipped. Returns how many were removed.
 */
export async function removeStaleTempFiles(dir: string, maxAgeMs: number): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  const cutoff = Date.now() - maxAgeMs;
  let removed = 0;
  for (const name of names.filter((n) => TEMP_FILE.test(n))) {
    const path = join(dir, name);
    try {
      if ((await stat(path)).mtimeMs < cutoff) {
        await unlink(path);
        removed += 1;
      }
    } catch {
      // Another process cleaned it up first, or it is not ours to remove: either way, nothing to do.
    }
  }
  return removed;
}

/**
 * Flushes directory entry changes (create, rename, link, unlink) to disk.
 * @throws PullSecretError classified from the filesystem error.
 */
export async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (err) {
    // Some filesystems cannot fsync a directory; the rename itself is still atomic there.
    const code = errnoCode(err);
    if (code === 'EINVAL' || code === 'EISDIR' || code === 'ENOTSUP') return;
    throw classifyFsError(err, 'sync directory', dir);
  }
}
