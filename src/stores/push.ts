import { PullSecretError } from '../errors/index.js';
import { isManaged, quoteIdentifier } from '../pullsecret/identifiers.js';
import { sameContent } from '../pullsecret/canonical.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelay, withRetry, type RetryPolicy } from '../util/retry.js';
import type { CreatedSecret, PushOutcome, SecretMetadata, SecretPayload, SecretStore } from './store.js';

/** What to store. `payload` is stored exactly as given. */
interface PushRequest {
  secretId: string;
  /** Labels for a new secret; must include `managed-by=hyperfleet` and `cluster-id`. */
  labels: Record<string, string>;
  payload: Buffer;
  /** Read and decide, but write nothing. */
  dryRun?: boolean;
  /**
   * The setting a user changes to pick another secret name, named in the refusal of an unmanaged
   * secret: `SECRET_NAME` (the job, the default) or `spec.pullSecret.secretName` (the adapter).
   */
  secretNameSetting?: string;
  /**
   * Runs once the first read shows the payload differs from the newest version (a new pull secret
   * would be promoted), before any write; a throw stops the push with nothing written. A no-op
   * push never calls it (registry verification: a no-op makes no registry call). `current`: the newest
   * enabled version that read found (the one still served when the throw stops the push), if any.
   */
  beforeWrite?: (current: { version: string } | undefined) => Promise<void>;
}

export interface PushResult {
  /** With `dryRun`, what a real push would have done. */
  outcome: PushOutcome;
  secretPath: string;
  /** Version id now holding the payload ("3"); absent on a dry run that would write. */
  version?: string;
  versionPath?: string;
  /** The bytes the store holds in that version, as read back (absent on a dry run that would write). */
  stored?: Buffer;
}

/** One line of progress, for the caller's logger. Never carries payload bytes. */
export interface PushEvent {
  operation: string;
  message: string;
  /** Default info; reads that change nothing are debug (a no-op logs no step at info). */
  level?: 'debug' | 'info' | 'warn';
  duration_ms?: number;
  version?: string;
  attempt?: number;
  retry_in_ms?: number;
  error_code?: string;
}

/** How long a push keeps re-reading while concurrent writers change the secret under it. */
const DEFAULT_CONFLICT_WAIT_MS = 60_000;
/** Pauses between those re-reads: short at first (a local lock is held for milliseconds), then up to 1 s. */
const CONFLICT_BACKOFF: RetryPolicy = {
  maxAttempts: Number.MAX_SAFE_INTEGER,
  baseDelayMs: 10,
  maxDelayMs: 1000,
};

export interface PushOptions {
  retry: RetryPolicy;
  /** Upper bound on waiting for concurrent writers (STORE_PRECONDITION_FAILED); default 60 s. */
  conflictWaitMs?: number;
  signal?: AbortSignal;
  onEvent?: (event: PushEvent) => void;
}

/**
 * Stores a pull secret idempotently (the contract in docs/architecture.md). It first reads the newest
 * enabled version (GCP: AccessSecretVersion of `latest`, which has its own, large quota): when that
 * already holds the payload (compared in canonical form) there is nothing to write and nothing else
 * is read. Only a push that writes reads the metadata and checks ownership: a missing secret is
 * created with its labels and the payload as its first version (ALREADY_EXISTS from a concurrent run
 * is fine: nothing is written, and the existing secret is read and decided on); an existing one is
 * refused when not managed by HyperFleet or managed for another cluster, else gets a new version.
 * The written version is read back and its bytes compared.
 *
 * Contract calls: no-op 1 (access), first run 3 (access, create with the first version, access),
 * update 4 (access, get, add, access); what each costs at the store: docs/architecture.md.
 * Each step is retried on its own; a retried add first re-reads the newest version, so a write whose
 * answer was lost is never repeated as a duplicate version (a retried create answers "exists", and
 * the content found is then the create's own: reported `created`).
 *
 * Ownership on the no-op path: a secret whose newest enabled version already holds exactly this
 * content is reported `unchanged` without its labels being read, even when it is not ours (no
 * `managed-by=hyperfleet`, or another cluster's). That is safe: a no-op writes nothing to it, and what
 * the caller does with the result (the Kubernetes Secret) is its own object, filled with the content
 * it asked for. The first push that would change it is refused (SECRET_UNMANAGED). A version disabled
 * by someone else is never taken for the current one: the compare is against the newest ENABLED.
 *
 * Concurrency: the add is a compare-and-add on the newest version that was compared (`ifLatest`), so
 * a decision taken on a stale read is never written. A writer that loses re-reads and decides again
 * (concurrent runs with the same content end with one version, the others `unchanged`), for up to
 * `conflictWaitMs`. How strictly each store holds the precondition: docs/architecture.md.
 *
 * @throws PullSecretError SECRET_UNMANAGED, VERIFY_MISMATCH, STORE_PRECONDITION_FAILED (still
 *   contended after `conflictWaitMs`), or the store's classified errors.
 */
export async function pushSecret(
  store: SecretStore,
  request: PushRequest,
  options: PushOptions,
): Promise<PushResult> {
  const { secretId, payload } = request;
  const secretPath = store.secretPath(secretId);
  const step: Step = (operation, message, fn, version, level) =>
    runStep(operation, message, fn, options, version, level);
  const call = { signal: options.signal };
  const readLatest = () =>
    step(
      'access-latest',
      'Read newest enabled version',
      () => accessLatestOrMissing(store, secretId, call),
      undefined,
      'debug',
    );
  // `made`: a create of ours whose answer was lost may be what the next read finds holding the payload.
  const unchanged = (latest: SecretPayload, made = false): PushResult => ({
    outcome: made ? 'created' : 'unchanged',
    secretPath: latest.secretPath ?? secretPath,
    version: latest.version,
    versionPath: latest.path,
    stored: latest.data,
  });

  const first = await readLatest();
  if (first !== NO_SECRET && first !== undefined && sameContent(first.data, payload)) return unchanged(first);
  await request.beforeWrite?.(
    first === NO_SECRET || first === undefined ? undefined : { version: first.version },
  );

  // Something to write: only now are the secret's metadata and ownership read.
  let metadata: SecretMetadata | undefined;
  let created = false;
  let added: { version: string; path: string } | undefined;
  let createRetried = false;
  if (first === NO_SECRET && !request.dryRun) {
    // The secret is created holding the payload as its first version, in one write where the store allows it.
    const made = await step<CreatedSecret | undefined>(
      'create-secret',
      (m) => (m ? 'Created secret' : 'Secret already exists'),
      (attempt) => {
        createRetried = attempt > 1;
        return store.createSecret(secretId, request.labels, { ...call, payload });
      },
      (m) => m?.version?.path,
    );
    metadata = made;
    created = made !== undefined;
    added = made?.version;
  }
  // Not created by us (it existed without a version, or a concurrent run created it): use theirs.
  metadata ??= await step(
    'get-secret',
    'Read secret metadata',
    () => store.getSecret(secretId, call),
    undefined,
    'debug',
  );
  if (metadata === undefined) {
    if (request.dryRun && first === NO_SECRET) return { outcome: 'created', secretPath };
    throw new PullSecretError(
      'SECRET_NOT_FOUND',
      `secret ${secretPath} vanished while it was being written`,
      { retryable: true },
    );
  }
  assertOwnership(metadata, request.labels, request.secretNameSetting ?? 'SECRET_NAME');

  // The first read still holds when it saw a version, or when we created the secret (no version
  // yet); a secret someone else created since may already hold theirs: read again.
  let latest = first === NO_SECRET ? undefined : first;
  const firstHolds = first !== NO_SECRET || created;
  let outcome: PushOutcome = 'created';
  const waitUntil = Date.now() + (options.conflictWaitMs ?? DEFAULT_CONFLICT_WAIT_MS);
  for (let round = 1; added === undefined; round++) {
    if (round > 1 || !firstHolds) {
      const now = await readLatest();
      // The metadata was read, so NOT_FOUND here means "no version"; a deleted secret fails the add.
      latest = now === NO_SECRET ? undefined : now;
      if (latest !== undefined && sameContent(latest.data, payload))
        return unchanged(latest, createRetried && round === 1);
    }
    outcome = latest === undefined ? 'created' : 'updated';
    if (request.dryRun) return { outcome, secretPath };
    const attempt = await addIfLatest(store, request, latest?.version ?? null, step, call);
    if (attempt.conflict === undefined) {
      added = attempt.added;
    } else {
      // Another writer added a version (or holds the write) since we read: wait, then decide again on
      // what is there now.
      if (Date.now() >= waitUntil) throw attempt.conflict;
      options.onEvent?.({
        operation: 'add-secret-version',
        message: 'Secret changed concurrently; reading it again',
        attempt: round,
      });
      await pause(backoffDelay(CONFLICT_BACKOFF, round), options.signal);
    }
  }

  const written = added;
  const readBack = await step(
    'verify-secret',
    'Read back the new version',
    () => store.accessVersion(secretId, written.version, call),
    (v) => v.path,
  );
  if (!readBack.data.equals(payload)) {
    throw new PullSecretError(
      'VERIFY_MISMATCH',
      `verification failed: version ${written.path} does not hold the bytes that were written`,
    );
  }
  return {
    outcome,
    secretPath: readBack.secretPath ?? secretPath,
    version: written.version,
    versionPath: written.path,
    stored: readBack.data,
  };
}

/** `accessLatestOrMissing`'s answer when the secret does not exist, or (GCP) exists with no version at all. */
const NO_SECRET = Symbol('no secret');

/**
 * The newest enabled version in one round trip where the store allows: SECRET_NOT_FOUND becomes
 * NO_SECRET, left unconfirmed (`skipExistenceCheck`) because the next step, a create or a metadata
 * read, settles it anyway.
 */
async function accessLatestOrMissing(
  store: SecretStore,
  secretId: string,
  call: { signal?: AbortSignal | undefined },
): Promise<SecretPayload | undefined | typeof NO_SECRET> {
  try {
    return await store.accessLatestEnabled(secretId, { ...call, skipExistenceCheck: true });
  } catch (err) {
    if (err instanceof PullSecretError && err.code === 'SECRET_NOT_FOUND') return NO_SECRET;
    throw err;
  }
}

type Step = <T>(
  operation: string,
  message: string | ((value: T) => string),
  fn: (attempt: number) => Promise<T>,
  version?: (value: T) => string | undefined,
  level?: PushEvent['level'],
) => Promise<T>;

/**
 * One compare-and-add step: adds `payload` only while `ifLatest` is still the newest enabled version.
 * A lost precondition is returned (not thrown) so the step's own retries, meant for transient
 * failures, do not repeat an add the store already refused.
 */
async function addIfLatest(
  store: SecretStore,
  request: PushRequest,
  ifLatest: string | null,
  step: Step,
  call: { signal?: AbortSignal | undefined },
): Promise<
  { added: { version: string; path: string }; conflict?: undefined } | { conflict: PullSecretError }
> {
  const { secretId, payload } = request;
  return step(
    'add-secret-version',
    'Added secret version',
    async (attempt) => {
      if (attempt > 1) {
        // The previous attempt may have been applied before its answer was lost.
        const current = await store.accessLatestEnabled(secretId, call);
        if (current !== undefined && current.version !== ifLatest && current.data.equals(payload)) {
          return { added: { version: current.version, path: current.path } };
        }
      }
      try {
        return { added: await store.addVersion(secretId, payload, { ...call, ifLatest }) };
      } catch (err) {
        if (err instanceof PullSecretError && err.code === 'STORE_PRECONDITION_FAILED')
          return { conflict: err };
        throw err;
      }
    },
    (v) => ('added' in v && v.added !== undefined ? v.added.path : undefined),
  );
}

async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch (err) {
    throw new PullSecretError('ABORTED', 'operation aborted while waiting for a concurrent writer', {
      cause: err,
    });
  }
}

/** Refuses a secret that HyperFleet does not own, or owns for another cluster. */
function assertOwnership(
  metadata: SecretMetadata,
  wanted: Readonly<Record<string, string>>,
  secretNameSetting: string,
): void {
  if (!isManaged(metadata.labels)) {
    throw new PullSecretError(
      'SECRET_UNMANAGED',
      `secret ${metadata.path} exists but is not managed by HyperFleet (label managed-by=hyperfleet is ` +
        `missing); refusing to modify it: rename or delete it, or set ${secretNameSetting} to another name`,
    );
  }
  const owner = metadata.labels['cluster-id'];
  if (owner !== undefined && wanted['cluster-id'] !== undefined && owner !== wanted['cluster-id']) {
    throw new PullSecretError(
      'SECRET_UNMANAGED',
      `secret ${metadata.path} belongs to cluster ${quoteIdentifier(owner)}, not ` +
        `${quoteIdentifier(wanted['cluster-id'])}; refusing to modify it`,
    );
  }
}

/** Runs one store step with its own retries and reports it once it succeeds. */
async function runStep<T>(
  operation: string,
  message: string | ((value: T) => string),
  fn: (attempt: number) => Promise<T>,
  options: PushOptions,
  version?: (value: T) => string | undefined,
  level?: PushEvent['level'],
): Promise<T> {
  const started = performance.now();
  const value = await withRetry(options.retry, fn, {
    signal: options.signal,
    onRetry: ({ attempt, delayMs, error }) =>
      options.onEvent?.({
        operation,
        level: 'warn',
        message: 'Retrying after a transient error',
        attempt,
        retry_in_ms: delayMs,
        error_code: error instanceof PullSecretError ? error.code : 'INTERNAL',
      }),
  });
  options.onEvent?.({
    operation,
    level,
    message: typeof message === 'function' ? message(value) : message,
    duration_ms: Math.round(performance.now() - started),
    version: version?.(value),
  });
  return value;
}
