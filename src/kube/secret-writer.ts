import { setTimeout as sleep } from 'node:timers/promises';
import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import { PullSecretError } from '../errors/index.js';
import { quoteIdentifier } from '../pullsecret/identifiers.js';
import { backoffDelay, type RetryPolicy } from '../util/retry.js';
import { createKubeApis, withSignal, type LoadKubeConfigOptions } from './client.js';
import { apiFailure, classifyKubeError, type KubeOperation } from './errors.js';
import type { PullSecretManifest } from './pull-secret-manifest.js';
import { summaryIsUpToDate, type SecretCache } from './secret-cache.js';
import { describeSecret, isManagedSecret, isUpToDate, mergeSecret } from './secret-merge.js';
import type {
  ApplyResult,
  KubernetesSecretTarget,
  RemoveOptions,
  SecretDescription,
  TargetCallOptions,
  TargetLogger,
} from './target.js';

/** Re-read-and-retry budget for optimistic-concurrency conflicts (409) within one call. */
const DEFAULT_CONFLICT_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 2000 };

interface SecretWriterOptions {
  core: CoreV1Api;
  /** API server URL, reported as `location`. */
  server: string;
  conflictRetry?: RetryPolicy;
  logger?: TargetLogger;
  /** The informer's cache (`secret-cache.ts`): an apply it shows up to date makes no API call. */
  cache?: SecretReadCache;
}

/** What the writer uses of the informer's cache. */
export type SecretReadCache = Pick<SecretCache, 'lookup' | 'observe' | 'expectDeletion'>;

/** Marks an attempt that lost an optimistic-concurrency race and should re-read. */
const CONFLICT = Symbol('conflict');

function aborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new PullSecretError('ABORTED', 'Kubernetes Secret operation aborted');
}

function secretRef(namespace: string, name: string): string {
  return `Kubernetes Secret ${quoteIdentifier(`${namespace}/${name}`)}`;
}

function unmanaged(namespace: string, name: string): PullSecretError {
  return new PullSecretError(
    'SECRET_UNMANAGED',
    `${secretRef(namespace, name)} exists without label managed-by=hyperfleet; refusing to modify or delete it`,
  );
}

/**
 * The Kubernetes API target: writes the pull secret Secret with `@kubernetes/client-node`.
 *
 * - Absent → create. A missing namespace is reported, not created: HyperShift creates
 *   `clusters-{id}` for the hosted cluster, and creating it here would race with (and could
 *   confuse) its owner. The error is retryable because the namespace is expected to appear.
 * - Present without `managed-by=hyperfleet` → SECRET_UNMANAGED, nothing written.
 * - Present and up to date (fingerprint annotation, bytes, our labels/annotations) → `unchanged`,
 *   zero writes; with the informer's cache (`cache`), zero calls: the cache is read first, and a
 *   GET is made only when it is not synced, has no entry, or shows something to change.
 * - Present, managed, with another type (a type cannot change in place) → deleted (with uid and
 *   resourceVersion preconditions) and created again, keeping others' labels, annotations and keys.
 * - Otherwise → PUT with the read resourceVersion, keeping others' labels, annotations and data
 *   keys; a 409 re-reads and retries with jittered backoff (bounded), then KUBE_CONFLICT.
 *
 * A deleted Secret is simply recreated by the next apply. 5xx and socket errors surface as
 * retryable KUBE_UNAVAILABLE; the caller decides when to retry.
 */
export class KubernetesSecretWriter implements KubernetesSecretTarget {
  readonly kind = 'kubernetes';
  readonly location: string;
  private readonly core: CoreV1Api;
  private readonly policy: RetryPolicy;
  private readonly logger: TargetLogger | undefined;
  private readonly cache: SecretReadCache | undefined;

  constructor(options: SecretWriterOptions) {
    this.core = options.core;
    this.cache = options.cache;
    this.location = options.server;
    this.policy = options.conflictRetry ?? DEFAULT_CONFLICT_RETRY;
    this.logger = options.logger;
  }

  async apply(desired: PullSecretManifest, options: TargetCallOptions = {}): Promise<ApplyResult> {
    const { name, namespace } = desired.metadata;
    return this.withConflictRetry('apply', namespace, name, options.signal, () =>
      this.applyOnce(desired, options.signal),
    );
  }

  async remove(namespace: string, name: string, options: RemoveOptions = {}): Promise<boolean> {
    return this.withConflictRetry('delete', namespace, name, options.signal, () =>
      this.removeOnce(namespace, name, options),
    );
  }

  async describe(
    namespace: string,
    name: string,
    options: TargetCallOptions = {},
  ): Promise<SecretDescription | undefined> {
    const secret = await this.read(namespace, name, options.signal);
    return secret === undefined
      ? undefined
      : { ...describeSecret(secret, name, namespace), resourceVersion: secret.metadata?.resourceVersion };
  }

  private async applyOnce(
    desired: PullSecretManifest,
    signal: AbortSignal | undefined,
  ): Promise<ApplyResult | typeof CONFLICT> {
    const { name, namespace } = desired.metadata;
    const cached = this.cache?.lookup(namespace, name);
    if (cached !== undefined && summaryIsUpToDate(cached, desired))
      return { outcome: 'unchanged', name, namespace, resourceVersion: cached.resourceVersion };
    const existing = await this.read(namespace, name, signal);
    if (existing === undefined) return this.create(desired, signal);
    if (!isManagedSecret(existing)) throw unmanaged(namespace, name);
    if (existing.type !== desired.type) return this.recreate(existing, desired, signal);
    if (isUpToDate(existing, desired))
      return { outcome: 'unchanged', name, namespace, resourceVersion: existing.metadata?.resourceVersion };
    const merged = mergeSecret(existing, desired);
    // The read object goes back whole, resourceVersion included, so a concurrent change is a 409.
    const body: V1Secret = {
      ...existing,
      metadata: { ...existing.metadata, labels: merged.labels, annotations: merged.annotations },
      data: merged.data,
    };
    const op: KubeOperation = { verb: 'update', kind: 'Secret', namespace, name };
    try {
      aborted(signal);
      const updated = await this.core.replaceNamespacedSecret({ name, namespace, body }, withSignal(signal));
      this.cache?.observe(updated);
      return { outcome: 'updated', name, namespace, resourceVersion: updated.metadata?.resourceVersion };
    } catch (err) {
      const code = apiFailure(err)?.code;
      // 404: deleted since the read; the retry re-reads and creates it.
      if (code === 409 || code === 404) return CONFLICT;
      throw classifyKubeError(err, op);
    }
  }

  /**
   * Our Secret with another type: deleted (only the version read) and created with the desired type and
   * the merged keys.
   */
  private async recreate(
    existing: V1Secret,
    desired: PullSecretManifest,
    signal: AbortSignal | undefined,
  ): Promise<ApplyResult | typeof CONFLICT> {
    const { name, namespace } = desired.metadata;
    const merged = mergeSecret(existing, desired);
    const removed = await this.deleteRead(existing, namespace, name, signal);
    if (removed === CONFLICT) return CONFLICT;
    const result = await this.create(
      {
        ...desired,
        metadata: { ...desired.metadata, labels: merged.labels, annotations: merged.annotations },
        data: merged.data,
      },
      signal,
    );
    return result === CONFLICT ? CONFLICT : { ...result, outcome: 'updated' };
  }

  private async create(
    desired: PullSecretManifest,
    signal: AbortSignal | undefined,
  ): Promise<ApplyResult | typeof CONFLICT> {
    const { name, namespace } = desired.metadata;
    try {
      aborted(signal);
      const created = await this.core.createNamespacedSecret(
        { namespace, body: desired },
        withSignal(signal),
      );
      this.cache?.observe(created);
      return { outcome: 'created', name, namespace, resourceVersion: created.metadata?.resourceVersion };
    } catch (err) {
      const failure = apiFailure(err);
      // AlreadyExists: a concurrent creator won; re-read and compare.
      if (failure?.code === 409) return CONFLICT;
      if (failure?.code === 404 && failure.detailsKind === 'namespaces') {
        throw new PullSecretError(
          'NAMESPACE_NOT_FOUND',
          `namespace ${quoteIdentifier(namespace)} does not exist; ${secretRef(namespace, name)} is ` +
            `written into the namespace HyperShift creates for the hosted cluster and is not created here`,
          { cause: err },
        );
      }
      throw classifyKubeError(err, { verb: 'create', kind: 'Secret', namespace, name });
    }
  }

  private async removeOnce(
    namespace: string,
    name: string,
    { signal, only }: RemoveOptions,
  ): Promise<boolean | typeof CONFLICT> {
    const existing = await this.read(namespace, name, signal);
    if (existing === undefined || (only !== undefined && !only(existing.metadata?.labels ?? {})))
      return false;
    if (!isManagedSecret(existing)) throw unmanaged(namespace, name);
    return this.deleteRead(existing, namespace, name, signal);
  }

  /** Deletes the version that was read: false when already gone, CONFLICT when it changed since. */
  private async deleteRead(
    existing: V1Secret,
    namespace: string,
    name: string,
    signal: AbortSignal | undefined,
  ): Promise<boolean | typeof CONFLICT> {
    try {
      aborted(signal);
      this.cache?.expectDeletion(namespace, name);
      // Preconditions: never delete a Secret that was replaced (perhaps by an unmanaged one) since the read.
      const preconditions = {
        uid: existing.metadata?.uid,
        resourceVersion: existing.metadata?.resourceVersion,
      };
      await this.core.deleteNamespacedSecret(
        { name, namespace, body: { preconditions } },
        withSignal(signal),
      );
      return true;
    } catch (err) {
      const code = apiFailure(err)?.code;
      if (code === 404) return false;
      if (code === 409) return CONFLICT;
      throw classifyKubeError(err, { verb: 'delete', kind: 'Secret', namespace, name });
    }
  }

  private async read(
    namespace: string,
    name: string,
    signal: AbortSignal | undefined,
  ): Promise<V1Secret | undefined> {
    try {
      aborted(signal);
      return await this.core.readNamespacedSecret({ name, namespace }, withSignal(signal));
    } catch (err) {
      if (apiFailure(err)?.code === 404) return undefined;
      throw classifyKubeError(err, { verb: 'read', kind: 'Secret', namespace, name });
    }
  }

  private async withConflictRetry<T>(
    what: string,
    namespace: string,
    name: string,
    signal: AbortSignal | undefined,
    attempt: () => Promise<T | typeof CONFLICT>,
  ): Promise<T> {
    for (let n = 1; ; n++) {
      const result = await attempt();
      if (result !== CONFLICT) return result;
      if (n >= this.policy.maxAttempts) {
        throw new PullSecretError(
          'KUBE_CONFLICT',
          `${secretRef(namespace, name)} kept changing during ${what}; gave up after ${n} attempts`,
        );
      }
      const delayMs = backoffDelay(this.policy, n);
      this.logger?.warn(
        { namespace, name, operation: what, attempt: n, delay_ms: delayMs },
        'kubernetes secret changed concurrently, retrying',
      );
      try {
        await sleep(delayMs, undefined, { signal });
      } catch (err) {
        throw new PullSecretError('ABORTED', 'Kubernetes Secret operation aborted while waiting to retry', {
          cause: err,
        });
      }
    }
  }
}

/**
 * A writer for the cluster found by `loadKubeConfig` (explicit path, KUBECONFIG, in-cluster,
 * default). Makes no network call.
 * @throws PullSecretError CONFIG_INVALID when no usable kubeconfig is found.
 */
export function createKubernetesSecretWriter(
  options: LoadKubeConfigOptions & {
    conflictRetry?: RetryPolicy;
    logger?: TargetLogger;
    cache?: SecretReadCache;
  } = {},
): KubernetesSecretWriter {
  const { core, server } = createKubeApis(options);
  return new KubernetesSecretWriter({
    core,
    server,
    conflictRetry: options.conflictRetry,
    logger: options.logger,
    cache: options.cache,
  });
}
