import { PullSecretError } from '../errors/index.js';
import { TokenBucket } from '../util/token-bucket.js';
import type { StoreQuotas } from './factory.js';
import type { CallOptions, SecretStore } from './store.js';

/** The quotas a store call counts against (Secret Manager's three request quotas). */
export const QUOTA_KINDS = ['reads', 'writes', 'accesses'] as const;
export type QuotaKind = (typeof QUOTA_KINDS)[number];

/** Token buckets per kind of call; a missing bucket means "not paced". */
export type RateLimits = Partial<Record<QuotaKind, TokenBucket>>;

/**
 * Observes the buckets (feeds `pullsecret_store_quota_tokens` and
 * `pullsecret_store_quota_waits_total`); must not throw.
 */
export interface PacingObserver {
  /** A scope's bucket came into use (its first client was built). */
  track(store: string, quota: QuotaKind, bucket: TokenBucket): void;
  /** That scope's clients were closed. */
  untrack(store: string, quota: QuotaKind, bucket: TokenBucket): void;
  /** A call had to wait for a token. */
  waited(store: string, quota: QuotaKind): void;
}

/** Share of each quota left unused, for clock and network jitter between us and the backend's counter. */
const HEADROOM = 0.05;

/**
 * The bucket for a quota of `limit` calls per sliding `windowMs`: it holds at most a sixtieth of
 * the quota (a second's worth of a per-minute quota) and refills at 95 % of the quota minus that,
 * so no window of the backend's ever sees more than the quota, even one that starts with a full
 * bucket (for quotas of a few dozen calls and more; a tiny quota still gets at least half its rate).
 * @throws RangeError when `limit` or `windowMs` is not positive.
 */
export function quotaBucket(limit: number, windowMs = 60_000): TokenBucket {
  const burst = Math.max(1, Math.ceil(limit / 60));
  return new TokenBucket(Math.max(limit * (1 - HEADROOM) - burst, limit / 2), burst, windowMs);
}

/**
 * The buckets of one quota scope: one per quota, each figure from `overrides` or else `declared`
 * (the store's). Empty when nothing is metered. Every client of the scope must share them.
 */
export function quotaLimits(
  declared: StoreQuotas,
  overrides: StoreQuotas = {},
  windowMs?: number,
): RateLimits {
  const limits: RateLimits = {};
  for (const kind of QUOTA_KINDS) {
    const limit = overrides[`${kind}PerMinute`] ?? declared[`${kind}PerMinute`];
    if (limit !== undefined) limits[kind] = quotaBucket(limit, windowMs);
  }
  return limits;
}

/**
 * Wraps a store so every call first takes a token from the bucket of the quota it counts against
 * (Secret Manager: 600 metadata reads, 600 writes and 90,000 payload accesses a minute per
 * project), so a burst of clusters queues rather than fails with RESOURCE_EXHAUSTED. A call that
 * fails with the quota error anyway (STORE_QUOTA_EXCEEDED: the quota is shared with other
 * processes, or lower than declared) drains its bucket, so every caller of this scope, the retry
 * of that call included, waits for fresh tokens instead of only for its backoff.
 *
 * One token per store method: `getSecret`, `describe` → reads; `accessLatestEnabled`,
 * `accessVersion` → accesses; `createSecret`, `addVersion`, `deleteSecret` and the version-lifecycle methods → writes,
 * except a `createSecret` holding a payload, which takes the store's `writesPerCreate` (GCP: CreateSecret and
 * AddSecretVersion). A method whose rare path makes more RPCs (the write intent, a disabled newest
 * version) still takes one.
 */
export function withRateLimits(
  store: SecretStore,
  limits: RateLimits,
  observer?: Pick<PacingObserver, 'waited'>,
): SecretStore {
  const paced =
    (kind: QuotaKind) =>
    async <R>(options: CallOptions | undefined, fn: () => Promise<R>, tokens = 1): Promise<R> => {
      const bucket = limits[kind];
      if (bucket === undefined) return fn();
      // Each token waited for is one wait (a create holding a payload may take two).
      for (let taken = 0; taken < tokens; taken++)
        if (await bucket.acquire(options?.signal)) observer?.waited(store.kind, kind);
      try {
        return await fn();
      } catch (err) {
        if (err instanceof PullSecretError && err.code === 'STORE_QUOTA_EXCEEDED') bucket.drain();
        throw err;
      }
    };
  const read = paced('reads');
  const write = paced('writes');
  const access = paced('accesses');
  return {
    kind: store.kind,
    maxPayloadBytes: store.maxPayloadBytes,
    ...(store.writesPerCreate === undefined ? {} : { writesPerCreate: store.writesPerCreate }),
    location: store.location,
    secretPath: (id) => store.secretPath(id),
    close: () => store.close(),
    getSecret: (id, o) => read(o, () => store.getSecret(id, o)),
    describe: (id, o) => read(o, () => store.describe(id, o)),
    accessLatestEnabled: (id, o) => access(o, () => store.accessLatestEnabled(id, o)),
    accessVersion: (id, v, o) => access(o, () => store.accessVersion(id, v, o)),
    createSecret: (id, labels, o) =>
      write(
        o,
        () => store.createSecret(id, labels, o),
        o?.payload === undefined ? 1 : (store.writesPerCreate ?? 1),
      ),
    addVersion: (id, data, o) => write(o, () => store.addVersion(id, data, o)),
    deleteSecret: (id, o) => write(o, () => store.deleteSecret(id, o)),
    ...lifecycle(store, (method) => (id, v, o) => write(o, () => method(id, v, o))),
  };
}

type LifecycleMethod = NonNullable<SecretStore['disableVersion']>;
type LifecycleName = 'disableVersion' | 'enableVersion' | 'destroyVersion';

/**
 * The optional version-lifecycle methods `store` has, each wrapped by `wrap` (absent ones stay
 * absent, so callers can still tell a store without them).
 */
export function lifecycle(
  store: SecretStore,
  wrap: (method: LifecycleMethod, name: LifecycleName) => LifecycleMethod,
): Pick<SecretStore, LifecycleName> {
  const out: Pick<SecretStore, LifecycleName> = {};
  if (store.disableVersion !== undefined)
    out.disableVersion = wrap(
      (id, v, o) => (store.disableVersion as LifecycleMethod)(id, v, o),
      'disableVersion',
    );
  if (store.enableVersion !== undefined)
    out.enableVersion = wrap(
      (id, v, o) => (store.enableVersion as LifecycleMethod)(id, v, o),
      'enableVersion',
    );
  if (store.destroyVersion !== undefined)
    out.destroyVersion = wrap(
      (id, v, o) => (store.destroyVersion as LifecycleMethod)(id, v, o),
      'destroyVersion',
    );
  return out;
}
