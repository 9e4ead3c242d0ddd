import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PullSecretError } from '../../errors/index.js';
import { removeFileDurable, removeStaleTempFiles, writeFileAtomic } from './atomic-file.js';
import { classifyFsError } from './fs-errors.js';
import { KEY_BYTES, keyId, loadOrCreateKeyFile } from './key.js';
import { DEFAULT_LOCK_TIMING, withLock, type LockTiming } from './lock.js';
import { fileStem, parseRecord, serializeRecord, type SecretRecord } from './secret-record.js';
import { ParsedFileCache } from '../../util/parsed-file-cache.js';

/** Bound on cached parsed records. */
const MAX_CACHED = 50_000;

/** Temp files older than this at start-up were left by a crashed writer. */
const TEMP_FILE_MAX_AGE_MS = 60_000;

/** Where the store lives, where its key comes from, and lock timing. */
export interface SecretFilesOptions {
  /** Store directory; relative paths resolve against the working directory. */
  dir: string;
  /** 32-byte key; when absent the key comes from `keyFile`. */
  key?: Buffer;
  /** Key file, generated on first use when missing. Default `{dir}/store.key`. */
  keyFile?: string;
  /** Cross-process lock timing (tests shorten it). */
  lockTiming?: Partial<LockTiming>;
}

/** The key in use and its non-secret fingerprint. */
export interface ActiveKey {
  key: Buffer;
  keyId: string;
}

/** What a read-modify-write decided: a record to write (`null` deletes the file) and the caller's result. */
export interface Change<T> {
  write?: SecretRecord | null;
  result: T;
}

/**
 * The storage mechanics under the local store: directory layout (`secrets/`, `locks/`, the key
 * file), lock-free reads of whole records, and read-modify-write under a per-secret cross-process
 * lock with atomic replacement. Knows nothing of Secret Manager semantics.
 */
export class SecretFiles {
  /** Absolute store directory. */
  readonly location: string;
  readonly #secretsDir: string;
  readonly #locksDir: string;
  readonly #keyFile: string;
  readonly #timing: LockTiming;
  readonly #givenKey: Buffer | undefined;
  #ready: Promise<ActiveKey> | undefined;
  /**
   * Parsed records: a no-op reconcile reads a record twice (metadata, then latest version), and
   * every write replaces the file (new inode), so a `stat` tells whether the cached parse holds.
   */
  readonly #parsed = new ParsedFileCache<SecretRecord>(MAX_CACHED);

  /** @throws PullSecretError CONFIG_INVALID when `key` is not 32 bytes. */
  constructor(options: SecretFilesOptions) {
    if (options.key !== undefined && options.key.length !== KEY_BYTES) {
      throw new PullSecretError('CONFIG_INVALID', `local store key must be exactly ${KEY_BYTES} bytes`);
    }
    this.location = resolve(options.dir);
    this.#secretsDir = join(this.location, 'secrets');
    this.#locksDir = join(this.location, 'locks');
    this.#keyFile = resolve(options.keyFile ?? join(this.location, 'store.key'));
    this.#givenKey = options.key === undefined ? undefined : Buffer.from(options.key);
    this.#timing = { ...DEFAULT_LOCK_TIMING, ...options.lockTiming };
  }

  /**
   * Creates the directories, loads (or generates) the key and removes temp files orphaned by crashed
   * writers; once per instance. A failure is not cached, so a later call retries (e.g. after a chmod).
   * @throws PullSecretError from key loading or classified filesystem errors.
   */
  open(): Promise<ActiveKey> {
    this.#ready ??= this.#init().catch((err: unknown) => {
      this.#ready = undefined;
      throw err;
    });
    return this.#ready;
  }

  /** Reads a secret's record without locking (writers replace files atomically); `undefined` if absent. */
  async read(secretId: string): Promise<SecretRecord | undefined> {
    const path = this.#recordPath(secretId);
    try {
      return await this.#parsed.load(path, (raw) => parseRecord(raw, secretId, path));
    } catch (err) {
      throw err instanceof PullSecretError ? err : classifyFsError(err, 'read', path);
    }
  }

  /**
   * Read-modify-write of one secret under its lock: `decide` sees the current record and returns the
   * change. Nothing is published if the lock was lost meanwhile (retryable STORE_CONFLICT).
   */
  async mutate<T>(secretId: string, signal: AbortSignal | undefined, decide: (current: SecretRecord | undefined) => Change<T>): Promise<T> {
    const lockPath = join(this.#locksDir, `${fileStem(secretId)}.lock`);
    return withLock(lockPath, this.#timing, signal, async (lock) => {
      const change = decide(await this.read(secretId));
      const path = this.#recordPath(secretId);
      if (change.write === null) {
        lock.assertHeld();
        this.#parsed.delete(path);
        await removeFileDurable(path);
      } else if (change.write !== undefined) {
        const text = serializeRecord(change.write);
        this.#parsed.delete(path);
        const written = await writeFileAtomic(path, text, { beforeCommit: () => lock.assertHeld() });
        // What a later read would parse, without the read: the next reconcile is a cache hit.
        this.#parsed.set(path, written, JSON.parse(text) as SecretRecord);
      }
      return change.result;
    });
  }

  async #init(): Promise<ActiveKey> {
    for (const dir of [this.#secretsDir, this.#locksDir]) {
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 });
      } catch (err) {
        throw classifyFsError(err, 'create the directory', dir);
      }
    }
    const key = this.#givenKey ?? (await loadOrCreateKeyFile(this.#keyFile));
    await removeStaleTempFiles(this.#secretsDir, TEMP_FILE_MAX_AGE_MS);
    return { key, keyId: keyId(key) };
  }

  #recordPath(secretId: string): string {
    return join(this.#secretsDir, `${fileStem(secretId)}.json`);
  }
}
