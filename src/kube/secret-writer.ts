import { setTimeout as sleep } from 'node:timers/promises';
import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import { PullSecretError } from '../errors/index.js';
import { quoteIdentifier } from '../pullsecret/identifiers.js';
import { backoffDelay, type RetryPolicy } from '../util/retry.js';
import { createKubeApis, withSignal, type LoadKubeConfigOptions } from './client.js';
import { apiFailure, classifyKubeError, type KubeOperation } from './errors.js';
import type { PullSecretManifest } from './pull-secret-manifest.js';
import { describeSecret, isManagedSecret, isUpToDate, mergeSecret } from './secret-merge.js';
import type { ApplyResult, KubernetesSecretTarget, SecretDescription, TargetCallOptions, TargetLogger } from './target.js';

/** Re-read-and-retry budget for optimistic-concurrency conflicts (409) within one call. */
export const DEFAULT_CONFLICT_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 2000 };

export interface SecretWriterOptions {
  core: CoreV1Api;
  /** API server URL, reported as `location`. */
  server: string;
  conflictRetry?: RetryPolicy;
  logger?: TargetLogger;
}

/** Marks an attempt that lost an optimistic-concurrency race and should re-read. */
const CONFLICT = Symbol('conflict');

function aborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new PullSecretError('ABORTED', 'Kubernetes Secret operation aborted');
}

function secretRef(namespace: string, name: string): string {
  return `Kubernetes Secret ${quoteIdentifier(`${namespace}/${name}`)}`;
}

function unmanaged(namespace: string, name: string): PullSecretError {
  return new PullSecretError('SECRET_UNMANAGED', `${secretRef(namespace, name)} exists without label managed-by=hyperfleet; refusing to modify or delete it`);
}

/**
 * The Kubernetes API target: writes the pull secret Secret with `@kubernetes/client-node`.
 *
 * - Absent → create. A missing namespace is reported, not created: HyperShift creates
 *   `clusters-{id}` for the hosted cluster, and creating it here would race with (and could
 *   confuse) its owner. The error is retryable because the namespace is expected to appear.
 * - Present without `managed-by=hyperfleet` → SECRET_UNMANAGED, nothing written.
 * - Present and up to date (fingerprint annotation, bytes, our labels/annotations) → `unchanged`,
 *   zero writes.
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

  constructor(options: SecretWriterOptions) {
    this.core = options.core;
    this.location = options.server;
    this.policy = options.conflictRetry ?? DEFAULT_CONFLICT_RETRY;
    this.logger = options.logger;
  }

  async apply(desired: PullSecretManifest, options: TargetCallOptions = {}): Promise<ApplyResult> {
    const { name, namespace } = desired.metadata;
    return this.withConflictRetry('apply', namespace, name, options.signal, () => this.applyOnce(desired, options.signal));
  }

  async remove(namespace: string, name: string, options: TargetCallOptions = {}): Promise<boolean> {
    return this.withConflictRetry('delete', namespace, name, options.signal, () => this.removeOnce(namespace, name, options.signal));
  }

  async describe(namespace: string, name: string, options: TargetCallOptions = {}): Promise<SecretDescription | undefined> {
    const secret = await this.read(namespace, name, options.signal);
    return secret === undefined ? undefined : { ...describeSecret(secret, name, namespace), resourceVersion: secret.metadata?.resourceVersion };
  }

  private async applyOnce(desired: PullSecretManifest, signal: AbortSignal | undefined): Promise<ApplyResult | typeof CONFLICT> {
    const { name, namespace } = desired.metadata;
    const existing = await this.read(namespace, name, signal);
    if (existing === undefined) return this.create(desired, signal);
    if (!isManagedSecret(existing)) throw unmanaged(namespace, name);
    if (existing.type !== desired.type) {
      throw new PullSecretError(
        'KUBE_INVALID_REQUEST',
        `${secretRef(namespace, name)} has type ${quoteIdentifier(existing.type ?? 'Opaque')}, not ${desired.type}; a Secret's type cannot change in place, delete it to have it recreated`,
      );
    }
    if (isUpToDate(existing, desired)) return { outcome: 'unchanged', name, namespace, resourceVersion: existing.metadata?.resourceVersion };
    const merged = mergeSecret(existing, desired);
    // The read object goes back whole, resourceVersion included, so a concurrent change is a 409.
    const body: V1Secret = { ...existing, metadata: { ...existing.metadata, labels: merged.labels, annotations: merged.annotations }, data: merged.data };
    const op: KubeOperation = { verb: 'update', kind: 'Secret', namespace, name };
    try {
      aborted(signal);
      const updated = await this.core.replaceNamespacedSecret({ name, namespace, body }, withSignal(signal));
      return { outcome: 'updated', name, namespace, resourceVersion: updated.metadata?.resourceVersion };
    } catch (err) {
      const code = apiFailure(err)?.code;
      // 404: deleted since the read; the retry re-reads and creates it.
      if (code === 409 || code === 404) return CONFLICT;
      throw classifyKubeError(err, op);
    }
  }

  private async create(desired: PullSecretManifest, signal: AbortSignal | undefined): Promise<ApplyResult | typeof CONFLICT> {
    const { name, namespace } = desired.metadata;
    try {
      aborted(signal);
      const created = await this.core.createNamespacedSecret({ namespace, body: desired }, withSignal(signal));
      return { outcome: 'created', name, namespace, resourceVersion: created.metadata?.resourceVersion };
    } catch (err) {
      const failure = apiFailure(err);
      // AlreadyExists: a concurrent creator won; re-read and compare.
      if (failure?.code === 409) return CONFLICT;
      if (failure?.code === 404 && failure.detailsKind === 'namespaces') {
        throw new PullSecretError(
          'NAMESPACE_NOT_FOUND',
          `namespace ${quoteIdentifier(namespace)} does not exist; ${secretRef(namespace, name)} is written into the namespace HyperShift creates for the hosted cluster and is not created here`,
          { cause: err },
        );
      }
      throw classifyKubeError(err, { verb: 'create', kind: 'Secret', namespace, name });
    }
  }

  private async removeOnce(namespace: string, name: string, signal: AbortSignal | undefined): Promise<boolean | typeof CONFLICT> {
    const existing = await this.read(namespace, name, signal);
    if (existing === undefined) return false;
    if (!isManagedSecret(existing)) throw unmanaged(namespace, name);
    try {
      aborted(signal);
      // Preconditions: never delete a Secret that was replaced (perhaps by an unmanaged one) since the read.
      const preconditions = { uid: existing.metadata?.uid, resourceVersion: existing.metadata?.resourceVersion };
      await this.core.deleteNamespacedSecret({ name, namespace, body: { preconditions } }, withSignal(signal));
      return true;
    } catch (err) {
      const code = apiFailure(err)?.code;
      if (code === 404) return false;
      if (code === 409) return CONFLICT;
      throw classifyKubeError(err, { verb: 'delete', kind: 'Secret', namespace, name });
    }
  }

  private async read(namespace: string, name: string, signal: AbortSignal | undefined): Promise<V1Secret | undefined> {
    try {
      aborted(signal);
      return await this.core.readNamespacedSecret({ name, namespace }, withSignal(signal));
    } catch (err) {
      if (apiFailure(err)?.code === 404) return undefined;
      throw classifyKubeError(err, { verb: 'read', kind: 'Secret', namespace, name });
    }
  }

  private async withConflictRetry<T>(what: string, namespace: string, name: string, signal: AbortSignal | undefined, attempt: () => Promise<T | typeof CONFLICT>): Promise<T> {
    for (let n = 1; ; n++) {
      const result = await attempt();
      if (result !== CONFLICT) return result;
      if (n >= this.policy.maxAttempts) {
        throw new PullSecretError('KUBE_CONFLICT', `${secretRef(namespace, name)} kept changing during ${what}; gave up after ${n} attempts`);
      }
      const delayMs = backoffDelay(this.policy, n);
      this.logger?.warn({ namespace, name, operation: what, attempt: n, delay_ms: delayMs }, 'kubernetes secret changed concurrently, retrying');
      try {
        await sleep(delayMs, undefined, { signal });
      } catch (err) {
        throw new PullSecretError('ABORTED', 'Kubernetes Secret operation aborted while waiting to retry', { cause: err });
      }
    }
  }
}

/**
 * A writer for the cluster found by `loadKubeConfig` (explicit path, KUBECONFIG, in-cluster,
 * default). Makes no network call.
 * @throws PullSecretError CONFIG_INVALID when no usable kubeconfig is found.
 */
export function createKubernetesSecretWriter(options: LoadKubeConfigOptions & { conflictRetry?: RetryPolicy; logger?: TargetLogger } = {}): KubernetesSecretWriter {
  const { core, server } = createKubeApis(options);
  return new KubernetesSecretWriter({ core, server, conflictRetry: options.conflictRetry, logger: options.logger });
}
