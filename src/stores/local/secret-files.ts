import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PullSecretError } from '../../errors/index.js';
import { removeFileDurable, removeStaleTempFiles, writeFileAtomic } from './atomic-file.js';
import { classifyFsError } from './fs-errors.js';
import { KEY_BYTES, readKeyFile } from './key.js';
import { fixedKeyRing, keyFilesSignature, loadKeyRing, type KeyRing } from './key-ring.js';
import { DEFAULT_LOCK_TIMING, withLock, type LockTiming } from './lock.js';
import { removeReleasedLocks } from './lock-owner.js';
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

/** The keys in use: the one that encrypts new versions, and every one that still decrypts. */
export type ActiveKey = KeyRing;

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
  /** `keyFilesSignature` when the ring was loaded. */
  #signature = '';
  /**
   * Parsed records: every reconcile reads the record (a no-op once: its latest version), and
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

  /** The key file (default `{dir}/store.key`). */
  get keyFile(): string {
    return this.#keyFile;
  }

  /**
   * The ring again if the key files changed since it was loaded (a rotation started or ended);
   * the cached ring otherwise. Costs two `stat` calls.
   * @throws PullSecretError as `open`.
   */
  async refreshKeys(): Promise<ActiveKey> {
    const active = await this.open();
    if (this.#givenKey !== undefined || (await keyFilesSignature(this.#keyFile)) === this.#signature)
      return active;
    const ring = await this.#loadRing();
    this.#ready = Promise.resolve(ring);
    return ring;
  }

  /** Ids of every secret in the store, from the record files (unreadable files are skipped). */
  async listIds(): Promise<string[]> {
    const ids: string[] = [];
    for (const name of await this.#recordFiles()) {
      const record = await this.#peek(name);
      if (typeof record?.id === 'string') ids.push(record.id);
    }
    return ids;
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
  async mutate<T>(
    secretId: string,
    signal: AbortSignal | undefined,
    decide: (current: SecretRecord | undefined, active: ActiveKey) => Change<T>,
  ): Promise<T> {
    const lockPath = join(this.#locksDir, `${fileStem(secretId)}.lock`);
    return withLock(lockPath, this.#timing, signal, async (lock) => {
      // Under the lock, so that a rotation that has passed this record never sees it written under the old key again.
      const active = await this.refreshKeys();
      const change = decide(await this.read(secretId), active);
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
    const ring = this.#givenKey === undefined ? await this.#loadRing() : fixedKeyRing(this.#givenKey);
    await removeStaleTempFiles(this.#secretsDir, TEMP_FILE_MAX_AGE_MS);
    await removeReleasedLocks(this.#locksDir, TEMP_FILE_MAX_AGE_MS);
    return ring;
  }

  async #loadRing(): Promise<KeyRing> {
    const signature = await keyFilesSignature(this.#keyFile);
    const ring = await loadKeyRing(this.#keyFile, () => this.#refuseNewKeyOverRecords());
    this.#signature = signature;
    return ring;
  }

  /**
   * A new key cannot read what an old one encrypted: with the key file gone and encrypted versions on
   * disk, generating a key would leave a store that mixes two keys. Refuse, and say how to recover.
   */
  async #refuseNewKeyOverRecords(): Promise<void> {
    for (const name of await this.#recordFiles()) {
      const record = await this.#peek(name);
      if (record?.versions?.some((v) => typeof v?.payload === 'string')) {
        // A process racing on a fresh store may have created the key, then written this record, since
        // the key was found missing.
        if ((await readKeyFile(this.#keyFile)) !== undefined) return;
        throw new PullSecretError(
          'CONFIG_INVALID',
          `local store ${this.location} holds encrypted secret versions but its key file ` +
            `${this.#keyFile} is missing; refusing to generate a new key that cannot read them: ` +
            'restore the key file from a backup (or pass the key with LOCAL_STORE_KEY or LOCAL_STORE_KEY_FILE). ' +
            'To change the key of a store, run `pull-secret store rotate-key` while the current key is present.',
        );
      }
    }
  }

  async #recordFiles(): Promise<string[]> {
    try {
      return (await readdir(this.#secretsDir)).filter((name) => name.endsWith('.json'));
    } catch (err) {
      throw classifyFsError(err, 'list', this.#secretsDir);
    }
  }

  /** A record file parsed loosely (for its id and versions), or `undefined` when unreadable. */
  async #peek(name: string): Promise<{ id?: unknown; versions?: { payload?: unknown }[] } | undefined> {
    try {
      return JSON.parse(await readFile(join(this.#secretsDir, name), 'utf8')) as {
        id?: unknown;
        versions?: { payload?: unknown }[];
      };
    } catch {
      return undefined;
    }
  }

  #recordPath(secretId: string): string {
    return join(this.#secretsDir, `${fileStem(secretId)}.json`);
  }
}
