import { stat } from 'node:fs/promises';
import { PullSecretError } from '../../errors/index.js';
import { errnoCode } from './fs-errors.js';
import { keyId, loadOrCreateKeyFile, readKeyFile } from './key.js';

/**
 * The keys a local store uses: one key encrypts new versions; every key a version may still be
 * encrypted under decrypts it. Normally that is the one key file. While `pull-secret store
 * rotate-key` runs (or after it crashed), the next key waits in `{keyFile}.next`: new versions are
 * encrypted under it and both keys decrypt, so every record stays readable until the rotation
 * replaces the key file with the next key (docs/architecture.md, "Store key rotation").
 */
export interface KeyRing {
  /** The key that encrypts new versions. */
  key: Buffer;
  /** Its non-secret fingerprint (see `keyId`), stored with each version. */
  keyId: string;
  /** Every usable key by key id, the writing key included. */
  keys: ReadonlyMap<string, Buffer>;
}

/** The file that holds the next key while a rotation is under way. */
export function nextKeyPath(keyFile: string): string {
  return `${keyFile}.next`;
}

/** A ring of one key given directly (LOCAL_STORE_KEY): no files, no rotation. */
export function fixedKeyRing(key: Buffer): KeyRing {
  const id = keyId(key);
  return { key, keyId: id, keys: new Map([[id, key]]) };
}

/**
 * Loads the ring from `keyFile` (and `{keyFile}.next` when present). A missing key file is created
 * only after `beforeCreate` agreed (it refuses when encrypted records exist).
 * @throws PullSecretError from reading or creating the key files, or from `beforeCreate`.
 */
export async function loadKeyRing(keyFile: string, beforeCreate: () => Promise<void>): Promise<KeyRing> {
  const current = await loadOrCreateKeyFile(keyFile, beforeCreate);
  const next = await readKeyFile(nextKeyPath(keyFile));
  const keys = new Map([[keyId(current), current]]);
  if (next === undefined) return { key: current, keyId: keyId(current), keys };
  keys.set(keyId(next), next);
  return { key: next, keyId: keyId(next), keys };
}

/**
 * A cheap fingerprint of the key files' identity (inode, size, mtime of both): it changes when a
 * rotation starts or ends, so a long-running process knows to load the ring again.
 */
export async function keyFilesSignature(keyFile: string): Promise<string> {
  const parts = await Promise.all(
    [keyFile, nextKeyPath(keyFile)].map(async (path) => {
      try {
        const info = await stat(path);
        return `${info.ino}:${info.size}:${info.mtimeMs}`;
      } catch (err) {
        if (errnoCode(err) === 'ENOENT') return '-';
        throw new PullSecretError('STORE_UNAVAILABLE', `local store: cannot stat the key file ${path}`, {
          cause: err,
        });
      }
    }),
  );
  return parts.join('|');
}
