import { createHash } from 'node:crypto';
/*
 * The rollback pin (docs/retention.md, "Rollback and pin"): a record, kept outside the cluster's
 * Secret and the store, that a cluster serves an earlier version's content until the spec's pull
 * secret changes, the pin is released, or it expires. It holds digests and names, never content.
 */
import { PullSecretError } from '../errors/index.js';

/** One cluster's pin. Every field is safe to log and to show (no credential byte). */
export interface Pin {
  clusterId: string;
  secretId: string;
  /** The version whose content was restored. */
  sourceVersion: string;
  /** The version the rollback wrote (or found current); absent while the rollback is under way. */
  version?: string;
  /** SHA-256 of the pinned content's canonical form (as the `hyperfleet.io/content-sha256` annotation). */
  contentSha256: string;
  /**
   * SHA-256 of the spec's pull secret when pinned; a spec whose digest differs ends the pin. Unset
   * when the rollback did not read the spec (the CLI): the first reconcile under the pin adopts it.
   */
  specSha256?: string;
  /** Who rolled back (the admin caller, the CLI user). */
  by: string;
  /** When (RFC 3339). */
  at: string;
  reason?: string;
  /** When the pin ends by itself (RFC 3339); none: until the spec changes or a release. */
  expiresAt?: string;
}

/** Where pins are kept: one per cluster, seen by every replica and the Job. */
export interface PinStore {
  /** `ConfigMap hyperfleet-system` or the pin directory, for messages. */
  readonly where: string;
  /**
   * The cluster's pin; undefined when it has none. A watching store answers from memory unless
   * `fresh` (a read of the object itself).
   */
  get(clusterId: string, signal?: AbortSignal, fresh?: boolean): Promise<Pin | undefined>;
  /** Stops a watch (the adapter's shutdown); nothing for the others. */
  stop?(): void;
  /** Creates or replaces the cluster's pin. */
  put(pin: Pin, signal?: AbortSignal): Promise<void>;
  /** Removes the cluster's pin; true when there was one. */
  delete(clusterId: string, signal?: AbortSignal): Promise<boolean>;
}

/** Why a pin stopped holding (the log's and the status's words). */
export type PinEnd = 'spec-changed' | 'released' | 'expired';

/** True when `pin` has expired at `now`. */
export function pinExpired(pin: Pin, now: number = Date.now()): boolean {
  return pin.expiresAt !== undefined && Date.parse(pin.expiresAt) <= now;
}

const FIELDS: ReadonlyArray<keyof Pin> = [
  'clusterId',
  'secretId',
  'sourceVersion',
  'version',
  'contentSha256',
  'specSha256',
  'by',
  'at',
  'reason',
  'expiresAt',
];
const REQUIRED: ReadonlyArray<keyof Pin> = [
  'clusterId',
  'secretId',
  'sourceVersion',
  'contentSha256',
  'by',
  'at',
];

/** The pin as flat string fields (a ConfigMap's data, a file's JSON); absent fields are left out. */
export function pinFields(pin: Pin): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of FIELDS) {
    const value = pin[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * The pin read back from flat fields.
 * @throws CONFIG_INVALID when a required field is missing or the digest is not a SHA-256 (`where` names the object)
 */
export function pinFromFields(fields: Readonly<Record<string, unknown>>, where: string): Pin {
  const pin: Record<string, string> = {};
  for (const key of FIELDS) {
    const value = fields[key];
    if (typeof value === 'string' && value !== '') pin[key] = value;
  }
  const missing = REQUIRED.filter((key) => pin[key] === undefined);
  if (missing.length > 0 || !/^[0-9a-f]{64}$/.test(pin.contentSha256 ?? '')) {
    const what = missing.length > 0 ? `missing ${missing.join(', ')}` : 'contentSha256';
    throw new PullSecretError(
      'CONFIG_INVALID',
      `the rollback pin ${where} is malformed (${what}); ` +
        'release it (pull-secret rollback --release) and roll back again',
    );
  }
  return pin as unknown as Pin;
}

/**
 * The pin state as a Kubernetes label value (at most 63 of `[A-Za-z0-9._-]`): `none` without a pin,
 * else the pinned version and the pin's time, or a SHA-256 prefix of them when that would not fit.
 * The Job launcher runs a generation's finished Job again when this changed. No pull secret byte.
 */
export function pinToken(pin: Pin | undefined): string {
  if (pin === undefined) return 'none';
  const plain = `v${pin.version ?? pin.sourceVersion}.${pin.at}`.replace(/[^A-Za-z0-9._-]/g, '');
  if (plain.length <= 63 && /[A-Za-z0-9]$/.test(plain)) return plain;
  return `h${createHash('sha256')
    .update(`${pin.version ?? pin.sourceVersion}|${pin.at}`)
    .digest('hex')
    .slice(0, 40)}`;
}
