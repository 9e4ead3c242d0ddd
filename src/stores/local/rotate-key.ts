import { rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PullSecretError } from '../../errors/index.js';
import { syncDirectory } from './atomic-file.js';
import { decryptPayload, encryptPayload } from './crypto.js';
import { classifyFsError } from './fs-errors.js';
import { createKeyFile, readKeyFile } from './key.js';
import { nextKeyPath, type KeyRing } from './key-ring.js';
import type { SecretRecord, VersionRecord } from './secret-record.js';
import { SecretFiles } from './secret-files.js';

/** Where the store lives. The key must come from a file: a key given directly cannot be replaced. */
interface RotateKeyOptions {
  dir: string;
  /** Default `{dir}/store.key`. */
  keyFile?: string;
}

/** What a rotation did. */
interface RotateKeyResult {
  /** Key id (fingerprint, not secret) of the retired key and of the key now in use. */
  oldKeyId: string;
  newKeyId: string;
  secrets: number;
  /** Versions re-encrypted by this run (a resumed run counts only what was left). */
  reencrypted: number;
  /** True when this run finished a rotation an earlier run had started. */
  resumed: boolean;
}

/**
 * Re-encrypts every version of a local store under a new key, crash-safely, while the store stays in
 * use:
 * 1. the new key is written durably to `{keyFile}.next` (kept if it exists: an earlier run crashed);
 *    from then on every store process encrypts new versions under it and decrypts with either key;
 * 2. each secret, under its lock, is re-encrypted and replaced atomically, one by one;
 * 3. every version is checked to decrypt under the new key;
 * 4. `{keyFile}.next` is renamed over the key file, which retires the old key.
 * A crash anywhere leaves every record readable; running again finishes the job.
 *
 * @throws PullSecretError CONFIG_INVALID (no key file: nothing to rotate), STORE_CORRUPT (a version
 *   that no key decrypts: nothing is retired), and the store's classified filesystem errors.
 */
export async function rotateStoreKey(options: RotateKeyOptions): Promise<RotateKeyResult> {
  const files = new SecretFiles({
    dir: options.dir,
    ...(options.keyFile === undefined ? {} : { keyFile: options.keyFile }),
  });
  const keyFile = files.keyFile;
  if ((await readKeyFile(keyFile)) === undefined) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `local store key file ${keyFile} does not exist: there is no key to rotate`,
    );
  }
  const nextPath = nextKeyPath(keyFile);
  const resumed = (await readKeyFile(nextPath)) !== undefined;
  if (!resumed) await createKeyFile(nextPath);

  const ring = await files.refreshKeys();
  const oldKeyId = [...ring.keys.keys()].find((id) => id !== ring.keyId) ?? ring.keyId;
  const ids = await files.listIds();
  let reencrypted = 0;
  for (const id of ids) {
    reencrypted += await files.mutate(id, undefined, (record, active) => {
      if (record === undefined) return { result: 0 };
      const { versions, changed } = reencryptRecord(record, active);
      return changed === 0 ? { result: 0 } : { write: { ...record, versions }, result: changed };
    });
  }
  for (const id of ids) {
    const record = await files.read(id);
    for (const v of record?.versions ?? []) {
      if (v.payload === undefined) continue;
      if (v.keyId !== ring.keyId)
        throw new PullSecretError(
          'STORE_CORRUPT',
          `local store: version ${v.version} of ${id} is still under another key; run again`,
        );
      decryptPayload(ring.key, { secretId: id, version: v.version }, v.payload);
    }
  }
  try {
    await rename(nextPath, keyFile);
  } catch (err) {
    throw classifyFsError(err, 'replace the key file', keyFile);
  }
  await syncDirectory(dirname(keyFile));
  return { oldKeyId, newKeyId: ring.keyId, secrets: ids.length, reencrypted, resumed };
}

/** Versions of `record` with every payload under the ring's writing key; `changed` counts re-encrypted ones. */
function reencryptRecord(
  record: SecretRecord,
  ring: KeyRing,
): { versions: VersionRecord[]; changed: number } {
  let changed = 0;
  const versions = record.versions.map((v) => {
    if (v.payload === undefined || v.keyId === ring.keyId) return v;
    // A version without a key id predates them: it was written under the key file's key.
    const key =
      v.keyId === undefined ? [...ring.keys.values()].find((k) => k !== ring.key) : ring.keys.get(v.keyId);
    if (key === undefined) {
      throw new PullSecretError(
        'STORE_CORRUPT',
        `local store: version ${v.version} of ${record.id} is under key id ${v.keyId ?? 'unknown'}, ` +
          `which is not available; nothing was retired`,
      );
    }
    const binding = { secretId: record.id, version: v.version };
    const plain = decryptPayload(key, binding, v.payload);
    changed += 1;
    const payload = encryptPayload(ring.key, binding, plain);
    plain.fill(0);
    return { ...v, keyId: ring.keyId, payload };
  });
  return { versions, changed };
}
