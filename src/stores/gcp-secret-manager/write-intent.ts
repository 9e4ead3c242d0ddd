import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { PullSecretError } from '../../errors/index.js';
import type { SecretVersionInfo } from '../store.js';

/**
 * The write intent: Secret Manager has no compare-and-set on versions, but it has one on the
 * secret's metadata (UpdateSecret with an etag). Before adding a version a writer records on the
 * secret, etag-checked, that it is about to write (annotation `hyperfleet-write-intent`:
 * `writer=<id>;expires=<ISO time>`); a writer that finds another's live intent, or whose
 * UpdateSecret loses the etag race, adds nothing and lets the caller re-read (STORE_PRECONDITION_FAILED).
 * With the intent held it re-checks the newest enabled version, adds, and clears the intent.
 * So among writers of ours (adapter replicas, Jobs, retried Jobs) one secret gets one version at a
 * time, and a writer never adds on top of a version it did not compare against. The intent holds no
 * payload byte and no hash of one.
 */

/** The annotation key (Secret Manager annotation keys allow no `/`, so no domain prefix). */
export const WRITE_INTENT_ANNOTATION = 'hyperfleet-write-intent';

/** A writer adds only this soon after its intent was recorded (by its own monotonic clock)... */
const USE_WITHIN_MS = 10_000;
/** ...and the intent lives long enough to cover that, the add call's deadline, and clock skew between hosts. */
const CLOCK_SKEW_MS = 10_000;

/** What a writer needs from the service, one RPC each. */
export interface IntentRpcs {
  /** GetSecret: etag and annotations; `undefined` when the secret does not exist. */
  getSecret(): Promise<{ etag: string; annotations: Record<string, string> } | undefined>;
  /**
   * UpdateSecret(annotations) with `etag`: the new etag, or `undefined` when the etag was stale.
   * `detached`: not cut short by the caller's signal (only by the call deadline).
   */
  updateAnnotations(
    annotations: Record<string, string>,
    etag: string,
    detached?: boolean,
  ): Promise<string | undefined>;
  /** The newest ENABLED version id, `null` when none. */
  newestEnabledVersion(): Promise<string | null>;
  /** AddSecretVersion. */
  add(): Promise<SecretVersionInfo>;
}

interface Intent {
  writer: string;
  expiresAt: number;
}

/** A writer id for one store client: host, process and a random part (not secret; shown in the annotation). */
export function newWriterId(): string {
  return `${hostname().slice(0, 40)}/${process.pid}/${randomBytes(4).toString('hex')}`;
}

function parseIntent(value: string | undefined): Intent | undefined {
  const match = /^writer=([^;]{1,100});expires=([0-9TZ:.-]{10,30})$/.exec(value ?? '');
  const expiresAt = match === null ? NaN : Date.parse(match[2] as string);
  return match === null || Number.isNaN(expiresAt) ? undefined : { writer: match[1] as string, expiresAt };
}

function conflict(path: string, why: string): PullSecretError {
  return new PullSecretError(
    'STORE_PRECONDITION_FAILED',
    `GCP Secret Manager secret ${path}: ${why}; re-reading`,
  );
}

/**
 * Adds a version under the write intent, only while `ifLatest` is the newest enabled version.
 * `callTimeoutMs` is the deadline of one RPC (it sizes the intent's lifetime).
 *
 * @throws PullSecretError STORE_PRECONDITION_FAILED (another writer's live intent, a lost etag
 *   race, a newer version, or too slow to use the intent), SECRET_NOT_FOUND, or what the RPCs throw
 *   (STORE_PERMISSION_DENIED naming secretmanager.secrets.update when it is not granted).
 */
export async function addUnderWriteIntent(
  rpcs: IntentRpcs,
  target: { path: string; writer: string; ifLatest: string | null; callTimeoutMs: number },
): Promise<SecretVersionInfo> {
  const { path, writer } = target;
  const secret = await rpcs.getSecret();
  if (secret === undefined)
    throw new PullSecretError('SECRET_NOT_FOUND', `GCP Secret Manager secret ${path} does not exist`);
  const held = parseIntent(secret.annotations[WRITE_INTENT_ANNOTATION]);
  if (held !== undefined && held.writer !== writer && held.expiresAt > Date.now()) {
    throw conflict(
      path,
      `another writer (${held.writer}) is adding a version until ${new Date(held.expiresAt).toISOString()}`,
    );
  }
  const started = performance.now();
  const expiresAt = Date.now() + USE_WITHIN_MS + target.callTimeoutMs + CLOCK_SKEW_MS;
  const intent = `writer=${writer};expires=${new Date(expiresAt).toISOString()}`;
  const etag = await rpcs.updateAnnotations(
    { ...secret.annotations, [WRITE_INTENT_ANNOTATION]: intent },
    secret.etag,
  );
  if (etag === undefined) throw conflict(path, 'another writer changed it first');

  try {
    const newest = await rpcs.newestEnabledVersion();
    if (newest !== target.ifLatest)
      throw conflict(
        path,
        `its newest enabled version is now ${newest ?? 'none'}, not ${target.ifLatest ?? 'none'}`,
      );
    if (performance.now() - started > USE_WITHIN_MS)
      throw conflict(path, 'the write intent is too old to use');
    return await rpcs.add();
  } finally {
    // Best effort: an intent left behind (crash, lost answer) only delays the next writer until it expires.
    // Detached from the caller's signal: a write cut short (drain, newer generation) still clears it.
    const others = Object.fromEntries(
      Object.entries(secret.annotations).filter(([key]) => key !== WRITE_INTENT_ANNOTATION),
    );
    await rpcs.updateAnnotations(others, etag, true).catch(() => undefined);
  }
}
