import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { MANAGED_BY } from '../pullsecret/identifiers.js';
import type { RetryPolicy } from '../util/retry.js';
import { makeApiClient, withSignal } from './client.js';
import { apiFailure, classifyKubeError } from './errors.js';
import { JOB_APP_LABEL } from './job-manifest.js';
import { listPages, runListWatch, type Listed, type RelistReason } from './list-watch.js';
import { ANNOTATIONS, DOCKERCONFIGJSON_KEY, type PullSecretManifest } from './pull-secret-manifest.js';
import { ownedMetadataMatches } from './secret-merge.js';

/**
 * The read side of the Kubernetes Secret writer: one list+watch (`list-watch.ts`) of the Secrets
 * labelled `managed-by=hyperfleet` (the Job data Secrets, `app=pullsecret-job`, left out), in all
 * namespaces or the configured ones, so a no-op apply needs no API call.
 *
 * Bounded memory: per Secret only what the up-to-date check needs (name, namespace, uid,
 * resourceVersion, type, our two labels, our annotations) and the SHA-256 of the `.dockerconfigjson`
 * bytes: never a payload, never another key. Under 1 kB a Secret (`npm run bench` measures it).
 *
 * Staleness: an entry changes only for a newer resourceVersion, whether it comes from the watch or
 * from a write's answer (`observe`), so a late watch event never rolls back what a write
 * returned. A skipped write needs an entry whose content hash, type, labels and annotations all
 * match what is desired; an entry from before a content change cannot match it.
 *
 * Readiness: `lookup` answers only once every scope has been listed and while its watch is up; a
 * broken watch makes the cache unsynced until the next list (the writer then reads with GET).
 */

/** The labels and annotations of ours that are kept. */
const OUR_LABELS = [MANAGED_BY.key, 'cluster-id'] as const;
const OUR_ANNOTATIONS = Object.values(ANNOTATIONS);
/** Managed Secrets, without the Job data Secrets (they are the launcher's, read by name). */
export const CACHED_SECRETS_SELECTOR = `${MANAGED_BY.key}=${MANAGED_BY.value},app!=${JOB_APP_LABEL}`;
/** Page size of the lists, so a list of 10,000 Secrets never sits in memory at once. */
const PAGE = 500;
const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 1, baseDelayMs: 250, maxDelayMs: 10_000 };

/** What is kept of one Secret. */
export interface SecretSummary {
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly type?: string;
  /** Only `managed-by` and `cluster-id`. */
  readonly labels: Readonly<Record<string, string>>;
  /** Only ours (`hyperfleet.io/*`). */
  readonly annotations: Readonly<Record<string, string>>;
  /** SHA-256 (hex) of the `.dockerconfigjson` bytes; undefined when the key is missing. */
  readonly payloadSha256?: string;
}

/** A change seen by the watch or a list: `previous` and/or `current` (undefined: absent). */
export interface SecretChange {
  previous?: SecretSummary;
  current?: SecretSummary;
  /** For a removal: the object had lost `managed-by` (it left the selection) rather than being deleted. */
  released?: boolean;
  /** The removal is one the writer announced (`expectDeletion`): ours, not someone else's. */
  ours?: boolean;
  /** SHA-256 of the `.dockerconfigjson` bytes this process last wrote to the Secret, when known. */
  written?: string;
}

interface SecretCacheOptions {
  kubeConfig: KubeConfig;
  /** Namespaces to watch; empty or unset: all. */
  namespaces?: readonly string[];
  retry?: RetryPolicy;
  /** Cache size after each change. */
  onSize?: (size: number) => void;
  /** Each list after the first, by reason. */
  onRelist?: (reason: RelistReason) => void;
  onError?: (fields: Record<string, unknown>) => void;
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function pick(from: Record<string, string> | undefined, keys: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of keys) if (from?.[k] !== undefined) out[k] = from[k];
  return out;
}

/** The kept part of a Secret (see the module comment). */
export function summarizeSecret(secret: V1Secret): SecretSummary {
  const payload = secret.data?.[DOCKERCONFIGJSON_KEY];
  return {
    namespace: secret.metadata?.namespace ?? '',
    name: secret.metadata?.name ?? '',
    uid: secret.metadata?.uid,
    resourceVersion: secret.metadata?.resourceVersion,
    type: secret.type,
    labels: pick(secret.metadata?.labels, OUR_LABELS),
    annotations: pick(secret.metadata?.annotations, OUR_ANNOTATIONS),
    payloadSha256: payload === undefined ? undefined : sha256(Buffer.from(payload, 'base64')),
  };
}

/**
 * True when `a` is a later resourceVersion than `b` (numeric compare, as etcd revisions are; anything
 * else counts as later).
 */
export function isNewerVersion(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return true;
  return BigInt(a) > BigInt(b);
}

/** True when the summary shows the desired Secret: same bytes, type, and our labels and annotations. */
export function summaryIsUpToDate(summary: SecretSummary, desired: PullSecretManifest): boolean {
  const want = desired.data[DOCKERCONFIGJSON_KEY];
  if (want === undefined || summary.payloadSha256 !== sha256(Buffer.from(want, 'base64'))) return false;
  return ownedMetadataMatches(
    {
      type: summary.type,
      metadata: { labels: { ...summary.labels }, annotations: { ...summary.annotations } },
    },
    desired,
  );
}

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

/** The Secret informer and its cache; see the module comment. Start it once, stop it once. */
export class SecretCache {
  private readonly entries = new Map<string, SecretSummary>();
  /** Deletions the writer announced, by key: their DELETED events are not someone else's. */
  private readonly deleting = new Map<string, number>();
  /** Payload hash of this process's last write, by key: a watch event showing it is our own write. */
  private readonly written = new Map<string, string>();
  private readonly listeners: Array<(change: SecretChange) => void> = [];
  private readonly unsynced: Set<string | undefined>;
  private readonly scopes: ReadonlyArray<string | undefined>;
  private readonly core: CoreV1Api;
  private readonly controller = new AbortController();
  private running: Promise<void> | undefined;
  /** Resolved by the first list that leaves every scope listed. */
  private readonly listed: Promise<true>;
  private markListed: () => void = () => undefined;

  constructor(private readonly options: SecretCacheOptions) {
    this.scopes =
      options.namespaces && options.namespaces.length > 0 ? [...new Set(options.namespaces)] : [undefined];
    this.unsynced = new Set(this.scopes);
    this.core = makeApiClient(options.kubeConfig, CoreV1Api);
    this.listed = new Promise<true>((resolve) => (this.markListed = () => resolve(true)));
  }

  /** True once every scope is listed and its watch is up. */
  get synced(): boolean {
    return this.unsynced.size === 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Resolves true once every scope has been listed for the first time (at once if it has), false
   * when `timeoutMs` passes first or the cache is stopped.
   */
  async whenListed(timeoutMs: number): Promise<boolean> {
    const timer = new AbortController();
    const waited = sleep(timeoutMs, false as const, {
      signal: AbortSignal.any([timer.signal, this.controller.signal]),
    }).catch(() => false as const);
    try {
      return await Promise.race([this.listed, waited]);
    } finally {
      timer.abort();
    }
  }

  /** Called for every change after the first list (not for the first list itself). */
  onChange(listener: (change: SecretChange) => void): void {
    this.listeners.push(listener);
  }

  /** Starts the list+watch loops in the background; never throws (failures are retried and reported to `onError`). */
  start(): void {
    this.running ??= Promise.all(this.scopes.map((scope) => this.run(scope))).then(() => undefined);
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.running;
  }

  /**
   * The cached Secret, or undefined when the cache cannot tell (not synced) or has no entry (then
   * only a GET can tell absent from unmanaged, which the selection leaves out).
   */
  lookup(namespace: string, name: string): SecretSummary | undefined {
    if (!this.synced) return undefined;
    return this.entries.get(keyOf(namespace, name));
  }

  /** True for a namespace the cache watches: an entry elsewhere would never be updated. */
  private watches(namespace: string): boolean {
    return this.scopes[0] === undefined || this.scopes.includes(namespace);
  }

  /** Records what a write returned, unless the cache already holds a later version. */
  observe(secret: V1Secret): void {
    const summary = summarizeSecret(secret);
    if (!this.watches(summary.namespace)) return;
    const key = keyOf(summary.namespace, summary.name);
    if (summary.payloadSha256 !== undefined) this.written.set(key, summary.payloadSha256);
    const previous = this.entries.get(key);
    if (previous !== undefined && !isNewerVersion(summary.resourceVersion, previous.resourceVersion)) return;
    this.entries.set(key, summary);
    this.options.onSize?.(this.entries.size);
  }

  /** Announces a deletion by the writer (before the call), so its DELETED event is not drift. */
  expectDeletion(namespace: string, name: string): void {
    this.deleting.set(keyOf(namespace, name), Date.now());
  }

  private emit(change: SecretChange): void {
    for (const listener of this.listeners) listener(change);
  }

  private async run(scope: string | undefined): Promise<void> {
    await runListWatch<SecretSummary>({
      kubeConfig: this.options.kubeConfig,
      path:
        scope === undefined ? '/api/v1/secrets' : `/api/v1/namespaces/${encodeURIComponent(scope)}/secrets`,
      labelSelector: CACHED_SECRETS_SELECTOR,
      signal: this.controller.signal,
      retry: this.options.retry ?? DEFAULT_RETRY,
      list: (signal) => this.list(scope, signal),
      onList: (items, reason, version) => this.replace(scope, items, reason, version),
      onEvent: (type, secret) => this.apply(type, secret as V1Secret),
      onUnsynced: () => this.unsynced.add(scope),
      onError: this.options.onError,
    });
  }

  private async list(scope: string | undefined, signal: AbortSignal): Promise<Listed<SecretSummary>> {
    try {
      return await listPages((cont) => {
        const request = { labelSelector: CACHED_SECRETS_SELECTOR, limit: PAGE, _continue: cont };
        return scope === undefined
          ? this.core.listSecretForAllNamespaces(request, withSignal(signal))
          : this.core.listNamespacedSecret({ ...request, namespace: scope }, withSignal(signal));
      }, summarizeSecret);
    } catch (err) {
      throw classifyKubeError(err, {
        verb: 'list',
        kind: 'Secret',
        namespace: scope ?? '*',
        name: CACHED_SECRETS_SELECTOR,
      });
    }
  }

  private replace(
    scope: string | undefined,
    listed: SecretSummary[],
    reason: RelistReason,
    version: string | undefined,
  ): void {
    if (reason !== 'initial') this.options.onRelist?.(reason);
    const seen = new Set<string>();
    for (const current of listed) {
      const key = keyOf(current.namespace, current.name);
      seen.add(key);
      const previous = this.entries.get(key);
      if (previous !== undefined && !isNewerVersion(current.resourceVersion, previous.resourceVersion))
        continue;
      this.entries.set(key, current);
      if (reason !== 'initial') this.emit({ previous, current, written: this.written.get(key) });
    }
    for (const [key, previous] of this.entries) {
      // An entry a write returned after the list was taken is newer than the list, not gone.
      if (
        seen.has(key) ||
        (scope !== undefined && previous.namespace !== scope) ||
        (version !== undefined && isNewerVersion(previous.resourceVersion, version))
      )
        continue;
      this.entries.delete(key);
      this.written.delete(key);
      if (reason !== 'initial') this.emit({ previous, ours: this.deleting.delete(key) });
    }
    this.unsynced.delete(scope);
    if (this.unsynced.size === 0) this.markListed();
    this.options.onSize?.(this.entries.size);
  }

  private apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', secret: V1Secret): void {
    const current = summarizeSecret(secret);
    const key = keyOf(current.namespace, current.name);
    const previous = this.entries.get(key);
    if (previous !== undefined && !isNewerVersion(current.resourceVersion, previous.resourceVersion)) return;
    if (type === 'DELETED') {
      this.entries.delete(key);
      this.written.delete(key);
      const ours = this.deleting.delete(key);
      const removed = previous ?? current;
      if (ours) this.emit({ previous: removed, ours });
      else void this.emitRemoval(removed, current);
    } else {
      this.entries.set(key, current);
      this.emit({ previous, current, written: this.written.get(key) });
    }
    this.pruneDeleting();
    this.options.onSize?.(this.entries.size);
  }

  /**
   * Whether a Secret the watch reported DELETED left the selection (lost `managed-by`) rather than
   * being deleted. The event cannot tell: it carries the object as it was before, still labelled
   * (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go), so one
   * GET does. A failed GET falls back to what the event shows.
   */
  private async emitRemoval(previous: SecretSummary, seen: SecretSummary): Promise<void> {
    const released = await this.released(seen);
    if (!this.controller.signal.aborted) this.emit({ previous, released, ours: false });
  }

  private async released(seen: SecretSummary): Promise<boolean> {
    try {
      const request = { namespace: seen.namespace, name: seen.name };
      const now = await this.core.readNamespacedSecret(request, withSignal(this.controller.signal));
      return now.metadata?.labels?.[MANAGED_BY.key] !== MANAGED_BY.value;
    } catch (err) {
      if (apiFailure(err)?.code === 404) return false;
      return seen.labels[MANAGED_BY.key] !== MANAGED_BY.value;
    }
  }

  /** Announced deletions whose event never came (the Secret was already gone) are dropped after a minute. */
  private pruneDeleting(): void {
    if (this.deleting.size === 0) return;
    const cutoff = Date.now() - 60_000;
    for (const [key, at] of this.deleting) if (at < cutoff) this.deleting.delete(key);
  }
}
