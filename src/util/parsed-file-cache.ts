import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { deepFreeze } from './deep-freeze.js';

/**
 * Files up to this size are read synchronously: a read of a few KiB from a local disk takes
 * microseconds, several times less CPU than the thread-pool round trips (open, stat, read, close)
 * of the async form. Larger files are read asynchronously.
 */
const SMALL_FILE_BYTES = 64 * 1024;

/**
 * What tells one version of a file from another: a replaced file has a new inode, an edited one a new size or mtime.
 */
export interface FileIdentity {
  ino: number;
  size: number;
  mtimeMs: number;
}

/**
 * The identity of the file at `path`; `undefined` when there is none (or it cannot be stat'ed).
 * Synchronous on purpose: one metadata syscall on a local file takes microseconds, and the
 * thread-pool round trip of the async form costs several times that in CPU on every cache check.
 */
export function fileIdentity(path: string): FileIdentity | undefined {
  try {
    const stats = statSync(path, { throwIfNoEntry: false });
    return stats === undefined ? undefined : { ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs };
  } catch {
    return undefined; // e.g. EACCES: the read that follows reports it
  }
}

/**
 * Parsed file contents by path, each with the identity of the file it came from, so a reader pays a
 * `stat` instead of a read and a parse while the file is unchanged. Writers that replace files
 * atomically record what they wrote (`set` with the identity of the file they published), so the
 * next read is a hit too. Values are deep-frozen: callers share them and build new ones to change
 * anything. Bounded: past `maxEntries` the oldest entry goes.
 */
export class ParsedFileCache<T> {
  readonly #entries = new Map<string, FileIdentity & { value: T }>();

  constructor(private readonly maxEntries: number) {}

  /**
   * The parsed file at `path`: the cached value while the file is unchanged, otherwise the file is
   * read and `parse`d (and cached). `undefined` when the file does not exist.
   *
   * @throws the filesystem error as Node raised it (callers classify it), or what `parse` throws.
   */
  async load(path: string, parse: (raw: Buffer) => T): Promise<T | undefined> {
    const identity = fileIdentity(path);
    const cached = this.get(path, identity);
    if (cached !== undefined) return cached;
    this.#entries.delete(path);
    let raw: Buffer;
    try {
      raw =
        identity !== undefined && identity.size <= SMALL_FILE_BYTES
          ? readFileSync(path)
          : await readFile(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const value = parse(raw);
    return identity === undefined ? value : this.set(path, identity, value);
  }

  /** The cached value when `identity` is the one it was cached with. */
  get(path: string, identity: FileIdentity | undefined): T | undefined {
    const entry = this.#entries.get(path);
    if (entry === undefined || identity === undefined) return undefined;
    return entry.ino === identity.ino && entry.size === identity.size && entry.mtimeMs === identity.mtimeMs
      ? entry.value
      : undefined;
  }

  /** Caches `value` (frozen in place) for the file version `identity`; returns the frozen value. */
  set(path: string, identity: FileIdentity, value: T): T {
    const frozen = deepFreeze(value);
    this.#entries.delete(path);
    if (this.#entries.size >= this.maxEntries)
      this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(path, { ...identity, value: frozen });
    return frozen;
  }

  delete(path: string): void {
    this.#entries.delete(path);
  }
}
