import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { PullSecretError } from '../../errors/index.js';
import { quoteIdentifier } from '../../pullsecret/identifiers.js';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Bumped if the AAD layout ever changes, so old data fails loudly instead of decrypting wrongly. */
const AAD_DOMAIN = 'pull-secret/local-store/v1';

/** Where a payload belongs; bound into the ciphertext so it cannot be moved to another secret or version. */
interface PayloadBinding {
  secretId: string;
  version: number;
}

function aad({ secretId, version }: PayloadBinding): Buffer {
  // NUL separators: neither part can contain one, so distinct bindings never encode alike.
  return Buffer.from(`${AAD_DOMAIN}\0${secretId}\0${version}`, 'utf8');
}

/**
 * Encrypts one version's payload with AES-256-GCM under a fresh random 12-byte IV, authenticating the
 * secret id and version number as additional data. Returns base64 of `iv | ciphertext | tag`.
 */
export function encryptPayload(key: Buffer, binding: PayloadBinding, plaintext: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad(binding));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64');
}

/**
 * Decrypts what `encryptPayload` produced for the same binding.
 * `keyHint` is appended to the failure message (e.g. "it was written with a different key").
 *
 * @throws PullSecretError STORE_CORRUPT when the data was altered, belongs to another secret or
 *   version, or was encrypted with another key. The message never includes the data.
 */
export function decryptPayload(
  key: Buffer,
  binding: PayloadBinding,
  encoded: string,
  keyHint?: string,
): Buffer {
  const corrupt = (cause?: unknown): PullSecretError =>
    new PullSecretError(
      'STORE_CORRUPT',
      `local store: cannot decrypt version ${binding.version} of secret ` +
        `${quoteIdentifier(binding.secretId)}: ${keyHint ?? 'the stored data was modified or the store key is wrong'}`,
      cause === undefined ? {} : { cause },
    );
  const raw = Buffer.from(encoded, 'base64');
  if (raw.length < IV_BYTES + TAG_BYTES) throw corrupt();
  const iv = raw.subarray(0, IV_BYTES);
  const tag = raw.subarray(raw.length - TAG_BYTES);
  const body = raw.subarray(IV_BYTES, raw.length - TAG_BYTES);
  try {
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad(binding));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]);
  } catch (err) {
    throw corrupt(err);
  }
}
