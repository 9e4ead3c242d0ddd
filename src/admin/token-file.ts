import { createHash } from 'node:crypto';
import { open, rm, stat, type FileHandle } from 'node:fs/promises';
import { PullSecretError } from '../errors/index.js';
import { quoteIdentifier } from '../pullsecret/identifiers.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import type { StoredTokens, TokenStorage } from './token-storage.js';
import { parseTokenState, serializeTokenState, type TokenState } from './token-state.js';

/** A lock older than this was left by a writer that died; it is broken. */
const STALE_LOCK_MS = 30_000;

const digest = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Admin tokens in a JSON file (mode 0600; refused when group or others may read it), for the dev stack
 * and tests. A write takes an exclusive
 * lock file (`<file>.lock`, created with O_EXCL), re-reads, writes only if the content is still the
 * version the caller read, and replaces the file atomically: two processes sharing the file behave
 * like two replicas sharing a Secret.
 */
export function fileTokenStorage(path: string): TokenStorage {
  const where = `file ${quoteIdentifier(path)}`;

  async function read(): Promise<StoredTokens | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw unreadable(err);
    }
    try {
      // fstat the open handle, not the path, so the checked file is the one that is read.
      const info = await handle.stat();
      // The same rule as the local store's key file: a token others can read is a token others can use.
      if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) {
        const mode = (info.mode & 0o777).toString(8).padStart(4, '0');
        throw new PullSecretError(
          'CONFIG_INVALID',
          `the admin token ${where} is accessible by group or others (mode ${mode}); refusing to use it: ` +
            `run \`chmod 600\` on it`,
        );
      }
      const text = await handle.readFile('utf8');
      return { state: parseTokenState(text, where), version: digest(text) };
    } catch (err) {
      throw err instanceof PullSecretError ? err : unreadable(err);
    } finally {
      await handle.close();
    }
  }

  function unreadable(err: unknown): PullSecretError {
    return new PullSecretError(
      'CONFIG_INVALID',
      `cannot read the admin token ${where}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      { cause: err },
    );
  }

  async function lock(): Promise<() => Promise<void>> {
    const lockPath = `${path}.lock`;
    for (let attempt = 0; ; attempt++) {
      try {
        const handle = await open(lockPath, 'wx', 0o600);
        await handle.close();
        return () => rm(lockPath, { force: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw new PullSecretError(
            'CONFIG_INVALID',
            `cannot lock the admin token ${where}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
            { cause: err },
          );
        }
        const age = await stat(lockPath).then(
          (s) => Date.now() - s.mtimeMs,
          () => 0,
        );
        if (age > STALE_LOCK_MS) await rm(lockPath, { force: true });
        else if (attempt > 200)
          throw new PullSecretError(
            'STORE_CONFLICT',
            `the admin token ${where} stays locked by another writer`,
          );
        else await new Promise((r) => setTimeout(r, 10));
      }
    }
  }

  return {
    where,
    read,
    async write(state: TokenState, expected: string | undefined): Promise<boolean> {
      const unlock = await lock();
      try {
        const now = await read();
        if (now?.version !== expected) return false;
        await writeFileAtomic(path, serializeTokenState(state), { mode: 0o600 });
        return true;
      } finally {
        await unlock();
      }
    },
  };
}
