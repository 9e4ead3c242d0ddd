import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { FileIdentity } from './parsed-file-cache.js';

/** Options of `writeFileAtomic`. */
export interface AtomicWriteOptions {
  /** File mode of the new file (before umask). Default 0600: what we write is nobody else's business. */
  mode?: number;
  /**
   * Runs after the data is durable in the temp file and right before the rename that publishes it;
   * throwing aborts the write and leaves the old file in place (e.g. to re-check lock ownership).
   */
  beforeCommit?: () => void;
}

/**
 * Replaces `path` with `data` crash-safely: write a uniquely named temp file (`.name.….tmp`) in the
 * same directory, fsync it, rename it over the target, fsync the directory. Readers see the old file
 * or the new one, never a torn one. The temp file is removed if anything fails.
 *
 * Returns the identity of the file it published (a rename keeps inode, size and mtime), so callers
 * can cache what they wrote (see ParsedFileCache).
 *
 * @throws the filesystem error as Node raised it (callers classify it), or what `beforeCommit` throws.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<FileIdentity> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  let identity: FileIdentity;
  try {
    const handle = await open(temp, 'wx', options.mode ?? 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
      const { ino, size, mtimeMs } = await handle.stat();
      identity = { ino, size, mtimeMs };
    } finally {
      await handle.close();
    }
    options.beforeCommit?.();
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw err;
  }
  await syncDirectory(dir);
  return identity;
}

/**
 * Flushes a directory entry change (create, rename, link, unlink) to disk. Filesystems that cannot
 * fsync a directory are tolerated: the rename itself is still atomic there.
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
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EINVAL' || code === 'EISDIR' || code === 'ENOTSUP') return;
    throw err;
  }
}
