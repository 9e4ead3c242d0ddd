import { createHash } from 'node:crypto';
import { z } from 'zod';
import { PullSecretError } from '../../errors/index.js';
import { quoteIdentifier } from '../../pullsecret/identifiers.js';

/**
 * The on-disk record of one secret: `{dir}/secrets/{stem}.json`. Metadata is plain JSON (it is not
 * secret, and operators can read it); each version's payload is AES-256-GCM ciphertext (see crypto.ts).
 */

/** Format version of the record; a reader refuses formats it does not know. */
export const RECORD_FORMAT = 1;

const versionSchema = z.object({
  version: z.number().int().positive(),
  state: z.enum(['ENABLED', 'DISABLED', 'DESTROYED']),
  createTime: z.string(),
  destroyTime: z.string().optional(),
  /** Key id (see key.ts) of the key that encrypted `payload`; absent once destroyed. */
  keyId: z.string().optional(),
  /** base64 of `iv | ciphertext | tag`; absent once destroyed. */
  payload: z.string().optional(),
});

const recordSchema = z.object({
  format: z.literal(RECORD_FORMAT),
  id: z.string(),
  labels: z.record(z.string(), z.string()),
  createTime: z.string(),
  etag: z.string(),
  versions: z.array(versionSchema),
});

/** One version as stored. */
export type VersionRecord = z.infer<typeof versionSchema>;
/** One secret as stored (the whole file). */
export type SecretRecord = z.infer<typeof recordSchema>;

/** Longest id used verbatim as a file name; longer ones are shortened (file names max out at 255 bytes). */
const MAX_PLAIN_STEM = 200;
const PLAIN_STEM = /^[a-z0-9_-]+$/;

/**
 * File name stem of a secret id. Lowercase ids up to 200 characters are used as is, so the store
 * stays readable; others (uppercase, which would collide on case-insensitive filesystems, or too
 * long for a file name) get a lowercase prefix plus `~` plus a hash of the exact id. `~` never
 * occurs in an id, so the two forms cannot collide; the record holds the exact id and reads check it.
 */
export function fileStem(secretId: string): string {
  if (secretId.length <= MAX_PLAIN_STEM && PLAIN_STEM.test(secretId)) return secretId;
  const hash = createHash('sha256').update(secretId).digest('hex').slice(0, 32);
  return `${secretId.toLowerCase().slice(0, 160)}~${hash}`;
}

/**
 * Parses a record read from disk and checks it belongs to `secretId`.
 * @throws PullSecretError STORE_CORRUPT naming the file (never its content).
 */
export function parseRecord(raw: Buffer, secretId: string, path: string): SecretRecord {
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new PullSecretError(
      'STORE_CORRUPT',
      `local store: ${path} is not valid JSON; restore it from a backup or delete it`,
    );
  }
  const parsed = recordSchema.safeParse(json);
  if (!parsed.success) {
    const where = parsed.error.issues[0]?.path.join('.') ?? '';
    throw new PullSecretError(
      'STORE_CORRUPT',
      `local store: ${path} is not a valid secret record (at "${where}")`,
    );
  }
  if (parsed.data.id !== secretId) {
    throw new PullSecretError(
      'STORE_CORRUPT',
      `local store: ${path} holds secret ${quoteIdentifier(parsed.data.id)}, not ${quoteIdentifier(secretId)}`,
    );
  }
  const numbers = parsed.data.versions.map((v) => v.version);
  if (new Set(numbers).size !== numbers.length) {
    throw new PullSecretError('STORE_CORRUPT', `local store: ${path} lists a version number twice`);
  }
  return parsed.data;
}

/** Serializes a record for writing (stable field order, trailing newline). */
export function serializeRecord(record: SecretRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

/** The next version number: one past the highest ever used (destroyed versions keep their number). */
export function nextVersionNumber(record: SecretRecord): number {
  return record.versions.reduce((max, v) => Math.max(max, v.version), 0) + 1;
}
