import { createHmac, randomBytes } from 'node:crypto';
import { link, mkdir, open, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { inspect } from 'node:util';
import { PullSecretError } from '../../errors/index.js';
import { syncDirectory } from './atomic-file.js';
import { classifyFsError, errnoCode } from './fs-errors.js';

/** AES-256 key length. */
export const KEY_BYTES = 32;
/** A key file is a few dozen bytes; anything much larger is not one, and is not read whole. */
const MAX_KEY_FILE_BYTES = 1024;

/** Decodes strict, padded base64 of exactly 32 bytes; `undefined` for anything else. */
export function decodeKeyBase64(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const bytes = Buffer.from(trimmed, 'base64');
  // Buffer's decoder skips invalid characters, so re-encode to make sure nothing was skipped.
  return bytes.length === KEY_BYTES && bytes.toString('base64') === trimmed ? bytes : undefined;
}

/**
 * Key bytes that never print themselves: JSON, `String()` and `util.inspect` show a placeholder, so a
 * config dump or a log line cannot leak the key.
 */
export class StoreKey {
  readonly #bytes: Buffer;

  constructor(bytes: Buffer) {
    if (bytes.length !== KEY_BYTES)
      throw new PullSecretError('CONFIG_INVALID', `local store key must be exactly ${KEY_BYTES} bytes`);
    this.#bytes = Buffer.from(bytes);
  }

  /** A copy of the key bytes. */
  bytes(): Buffer {
    return Buffer.from(this.#bytes);
  }

  toJSON(): string {
    return '[REDACTED]';
  }

  toString(): string {
    return '[REDACTED]';
  }

  [inspect.custom](): string {
    return 'StoreKey [REDACTED]';
  }
}

/**
 * A short, stable, non-secret fingerprint of a key (HMAC of a constant under the key). Stored next to
 * each ciphertext so a wrong key can be told apart from tampered data.
 */
export function keyId(key: Buffer): string {
  return createHmac('sha256', key).update('pull-secret local store key id').digest('hex').slice(0, 16);
}

/**
 * Reads the key file at `path`, creating it first (32 random bytes, base64 on one line, mode 0600) if
 * it does not exist. Creation is exclusive (a complete temp file is hard-linked into place, which fails
 * if the name exists), so processes starting at once all end up with the same key.
 *
 * `beforeCreate` runs first when the file is missing and may refuse (throw) to create one.
 *
 * @throws PullSecretError CONFIG_INVALID when the file is readable or writable by group or others
 *   (naming the path and the `chmod 600` fix), is not a regular file, or does not hold a key;
 *   filesystem errors are classified (STORE_PERMISSION_DENIED, STORE_UNAVAILABLE, ...); whatever
 *   `beforeCreate` throws.
 */
export async function loadOrCreateKeyFile(path: string, beforeCreate?: () => Promise<void>): Promise<Buffer> {
  const existing = await readKeyFile(path);
  if (existing !== undefined) return existing;
  await beforeCreate?.();
  const created = await createKeyFile(path);
  if (created !== undefined) return created;
  const winner = await readKeyFile(path);
  if (winner === undefined) {
    throw new PullSecretError(
      'STORE_UNAVAILABLE',
      `local store: key file ${path} vanished while it was being created; try again`,
    );
  }
  return winner;
}

/**
 * Reads and checks a key file; `undefined` when it does not exist.
 * @throws PullSecretError as `loadOrCreateKeyFile`.
 */
export async function readKeyFile(path: string): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw classifyFsError(err, 'open the key file', path);
  }
  try {
    // fstat the open handle, not the path, so the checked file is the one that is read.
    const info = await handle.stat();
    if (!info.isFile())
      throw new PullSecretError('CONFIG_INVALID', `local store key file ${path} is not a regular file`);
    if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) {
      const mode = (info.mode & 0o777).toString(8).padStart(4, '0');
      throw new PullSecretError(
        'CONFIG_INVALID',
        `local store key file ${path} is accessible by group or others (mode ${mode}); refusing to use ` +
          `it: run \`chmod 600 ${path}\``,
      );
    }
    const buffer = Buffer.alloc(MAX_KEY_FILE_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const content = buffer.subarray(0, bytesRead);
    const key =
      content.length === KEY_BYTES ? Buffer.from(content) : decodeKeyBase64(content.toString('latin1'));
    buffer.fill(0);
    if (key === undefined) {
      throw new PullSecretError(
        'CONFIG_INVALID',
        `local store key file ${path} does not hold a ${KEY_BYTES}-byte key (raw bytes, or base64 on one line)`,
      );
    }
    return key;
  } catch (err) {
    throw classifyFsError(err, 'read the key file', path);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Creates the key file with a new random key, exclusively and durably; `undefined` when the file
 * exists already (another process created it first).
 * @throws PullSecretError classified filesystem errors.
 */
export async function createKeyFile(path: string): Promise<Buffer | undefined> {
  const dir = dirname(path);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw classifyFsError(err, 'create the directory', dir);
  }
  const key = randomBytes(KEY_BYTES);
  // The key is complete and durable under a private name before it becomes visible under `path`.
  const staging = join(dir, `.${basename(path)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  try {
    const handle = await open(staging, 'wx', 0o600);
    try {
      await handle.writeFile(`${key.toString('base64')}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(staging, path);
  } catch (err) {
    if (errnoCode(err) === 'EEXIST') return undefined;
    throw classifyFsError(err, 'create the key file', path);
  } finally {
    await unlink(staging).catch(() => undefined);
  }
  // Secrets encrypted under this key must never outlive it on disk: make the new name durable first.
  await syncDirectory(dir);
  return key;
}
