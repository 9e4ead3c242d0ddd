import { readdir, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  syncDirectory as syncDirectoryRaw,
  writeFileAtomic as writeFileAtomicRaw,
  type AtomicWriteOptions,
} from '../../util/atomic-file.js';
import type { FileIdentity } from '../../util/parsed-file-cache.js';
import { classifyFsError, errnoCode } from './fs-errors.js';

/** Temp files are dot-files ending in `.tmp`, so no store file name can be mistaken for one. */
const TEMP_FILE = /^\..+\.tmp$/;

export type { AtomicWriteOptions };

/**
 * `writeFileAtomic` of src/util with the store's error classification: crash-safe replacement of
 * `target`; a crash leaves the old file or the new one, at worst an orphaned temp file, which
 * readers never open and `removeStaleTempFiles` cleans up. Returns the published file's identity.
 *
 * @throws PullSecretError classified from the filesystem error (see `classifyFsError`).
 */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<FileIdentity> {
  try {
    return await writeFileAtomicRaw(target, data, options);
  } catch (err) {
    throw classifyFsError(err, 'write', target);
  }
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
 * `syncDirectory` of src/util with the store's error classification.
 * @throws PullSecretError classified from the filesystem error.
 */
export async function syncDirectory(dir: string): Promise<void> {
  try {
    await syncDirectoryRaw(dir);
  } catch (err) {
    throw classifyFsError(err, 'sync directory', dir);
  }
}
