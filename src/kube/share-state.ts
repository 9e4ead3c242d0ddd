import {
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1Secret,
} from '@kubernetes/client-node';
import { makeApiClient, withSignal } from './client.js';
import { listPages, runListWatch, type Listed } from './list-watch.js';
import { CACHED_SECRETS_SELECTOR, isNewerVersion } from './secret-cache.js';
import type { RetryPolicy } from '../util/retry.js';
import {
  SHARE_GROUP,
  SHARE_LABEL,
  SHARE_PLURAL,
  SHARE_VERSION,
  type ShareObject,
  type SourceKind,
  type SourceMatcher,
} from './share-types.js';
import { dataSha256, ShareSources, type SourceRef, type SourceSecret } from './share-sources.js';

export type { SourceSecret } from './share-sources.js';

/**
 * What the share controller knows, kept by list+watches (`runListWatch`): the shares, the
 * namespaces and their labels, the managed Secrets (sources with their data, copies with only a
 * hash of theirs), and a tick for every change to Roles, ClusterRoles and their bindings. A
 * reconcile of an unchanged consumer reads only this, never the API.
 *
 * A separate watch from the Secret writer's cache (`kube/secret-cache.ts`): that one keeps no
 * data by design, and a share needs the source's bytes to copy them.
 */

/** A copy made by a share: no data, only its hash. */
interface CopySummary {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion?: string;
  type: string;
  share: string;
  ownerUids: string[];
  sha256: string;
}

/** What changed, for the controller to enqueue the right shares. */
export type StateChange =
  | { kind: 'share'; name: string }
  | { kind: 'namespaces' }
  | ({ kind: 'source' } & SourceRef)
  | { kind: 'copy'; share: string }
  | { kind: 'rbac' };

interface ShareStateOptions {
  kubeConfig: KubeConfig;
  /** The source kinds: how each one's Secret is told apart. */
  sources: readonly SourceMatcher[];
  retry?: RetryPolicy;
  onChange: (change: StateChange) => void;
  onError?: (fields: Record<string, unknown>) => void;
}

const PAGE = 500;
const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 1, baseDelayMs: 250, maxDelayMs: 10_000 };
const RBAC_KINDS = ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'] as const;

interface Meta {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    ownerReferences?: { uid?: string }[];
    deletionTimestamp?: unknown;
  };
}

function toShare(obj: unknown): ShareObject | undefined {
  const o = obj as Meta & { spec?: unknown; status?: ShareObject['status'] };
  const name = o.metadata?.name;
  if (name === undefined || o.metadata?.uid === undefined) return undefined;
  return { name, uid: o.metadata.uid, generation: o.metadata.generation, spec: o.spec, status: o.status };
}

/** True when both are absent, or both present with the same labels. */
function sameLabels(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  if (a === undefined || b === undefined) return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
}

/** A namespace being deleted (https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/). */
function isTerminating(ns: Meta & { status?: { phase?: string } }): boolean {
  return ns.metadata?.deletionTimestamp !== undefined || ns.status?.phase === 'Terminating';
}

/** The shares' view of the cluster. Call `start`, then read once `synced()`. */
export class ShareState {
  readonly shares = new Map<string, ShareObject>();
  readonly namespaces = new Map<string, Readonly<Record<string, string>>>();
  /**
   * Namespaces being deleted (`deletionTimestamp` set, phase Terminating): the API server refuses new
   * content there until they are gone, so they are no consumers (also in `namespaces` until then).
   */
  readonly terminating = new Set<string>();
  private readonly sources: ShareSources;
  /** `{namespace}/{name}` → copy. */
  private readonly copies = new Map<string, CopySummary>();
  private readonly listed = new Set<string>();
  private readonly controller = new AbortController();
  private running: Promise<unknown> | undefined;
  private readonly core: CoreV1Api;
  private readonly custom: CustomObjectsApi;
  private readonly rbac: RbacAuthorizationV1Api;

  constructor(private readonly options: ShareStateOptions) {
    this.sources = new ShareSources(options.sources);
    this.core = makeApiClient(options.kubeConfig, CoreV1Api);
    this.custom = makeApiClient(options.kubeConfig, CustomObjectsApi);
    this.rbac = makeApiClient(options.kubeConfig, RbacAuthorizationV1Api);
  }

  /** True once every watch has listed at least once. */
  synced(): boolean {
    return this.listed.size === 3 + RBAC_KINDS.length;
  }

  /** A cluster's source Secret of a kind (`ShareSources.get`). */
  source(kind: SourceKind, clusterId: string): SourceSecret | undefined {
    return this.sources.get(kind, clusterId);
  }

  copy(namespace: string, name: string): CopySummary | undefined {
    return this.copies.get(`${namespace}/${name}`);
  }

  /** Copies labelled with a share's name (owned or not: the caller checks the owner). */
  copiesOf(share: string): CopySummary[] {
    return [...this.copies.values()].filter((c) => c.share === share);
  }

  /** Records a Secret a write returned (newer versions only), or its deletion. */
  observeSecret(secret: V1Secret | undefined, deleted?: { namespace: string; name: string }): void {
    if (deleted !== undefined) {
      this.copies.delete(`${deleted.namespace}/${deleted.name}`);
      return;
    }
    if (secret !== undefined) this.putSecret(secret, false);
  }

  private putSecret(secret: Meta & { type?: string; data?: Record<string, string> }, notify: boolean): void {
    const namespace = secret.metadata?.namespace ?? '';
    const name = secret.metadata?.name ?? '';
    const changed = this.sources.put(secret);
    if (notify) for (const ref of changed) this.options.onChange({ kind: 'source', ...ref });
    // A source carries no share label: it is no copy either.
    const share = secret.metadata?.labels?.[SHARE_LABEL];
    if (share === undefined) return;
    const key = `${namespace}/${name}`;
    const previous = this.copies.get(key);
    if (previous !== undefined && !isNewerVersion(secret.metadata?.resourceVersion, previous.resourceVersion))
      return;
    this.copies.set(key, {
      namespace,
      name,
      share,
      uid: secret.metadata?.uid ?? '',
      resourceVersion: secret.metadata?.resourceVersion,
      type: secret.type ?? 'Opaque',
      ownerUids: (secret.metadata?.ownerReferences ?? []).map((r) => r.uid ?? ''),
      sha256: dataSha256(secret.data),
    });
    if (notify) this.options.onChange({ kind: 'copy', share });
  }

  private removeSecret(secret: Meta, notify: boolean): void {
    const namespace = secret.metadata?.namespace ?? '';
    const ref = this.sources.forget(namespace, secret.metadata?.name ?? '');
    if (ref !== undefined) {
      if (notify) this.options.onChange({ kind: 'source', ...ref });
      return;
    }
    const key = `${namespace}/${secret.metadata?.name ?? ''}`;
    const previous = this.copies.get(key);
    if (previous === undefined) return;
    this.copies.delete(key);
    if (notify) this.options.onChange({ kind: 'copy', share: previous.share });
  }

  /** Starts every list+watch in the background; they retry for ever until `stop`. */
  start(): void {
    const { signal } = this.controller;
    const retry = this.options.retry ?? DEFAULT_RETRY;
    const common = { kubeConfig: this.options.kubeConfig, signal, retry, onError: this.options.onError };
    const page = <I>(
      fetch: (
        cont: string | undefined,
      ) => Promise<{ items: I[]; metadata?: { resourceVersion?: string; _continue?: string } }>,
    ) => listPages(fetch, (i: I) => i);
    const first = (name: string) => {
      const initial = !this.listed.has(name);
      this.listed.add(name);
      // The last first list: everything is known, every share can be reconciled.
      if (initial && this.synced()) queueMicrotask(() => this.options.onChange({ kind: 'namespaces' }));
      return initial;
    };
    const watches: Promise<void>[] = [
      runListWatch<unknown>({
        ...common,
        path: `/apis/${SHARE_GROUP}/${SHARE_VERSION}/${SHARE_PLURAL}`,
        list: (s) =>
          page(
            (cont) =>
              this.custom.listClusterCustomObject(
                {
                  group: SHARE_GROUP,
                  version: SHARE_VERSION,
                  plural: SHARE_PLURAL,
                  limit: PAGE,
                  _continue: cont,
                },
                withSignal(s),
              ) as Promise<never>,
          ),
        onList: (items) => {
          first('shares');
          const names = new Set<string>();
          for (const item of items) {
            const share = toShare(item);
            if (share === undefined) continue;
            names.add(share.name);
            this.shares.set(share.name, share);
            this.options.onChange({ kind: 'share', name: share.name });
          }
          for (const name of [...this.shares.keys()].filter((n) => !names.has(n))) {
            this.shares.delete(name);
            this.options.onChange({ kind: 'share', name });
          }
        },
        onEvent: (type, object) => {
          const share = toShare(object);
          if (share === undefined) return;
          if (type === 'DELETED') this.shares.delete(share.name);
          else this.shares.set(share.name, share);
          this.options.onChange({ kind: 'share', name: share.name });
        },
      }),
      runListWatch<unknown>({
        ...common,
        path: '/api/v1/namespaces',
        list: (s) =>
          page(
            (cont) =>
              this.core.listNamespace({ limit: PAGE, _continue: cont }, withSignal(s)) as Promise<never>,
          ),
        onList: (items) => {
          first('namespaces');
          this.namespaces.clear();
          this.terminating.clear();
          for (const item of items as Meta[]) {
            this.namespaces.set(item.metadata?.name ?? '', { ...(item.metadata?.labels ?? {}) });
            if (isTerminating(item)) this.terminating.add(item.metadata?.name ?? '');
          }
          this.options.onChange({ kind: 'namespaces' });
        },
        onEvent: (type, object) => {
          const name = (object as Meta).metadata?.name ?? '';
          const before = this.namespaces.get(name);
          const labels = type === 'DELETED' ? undefined : { ...((object as Meta).metadata?.labels ?? {}) };
          if (labels === undefined) this.namespaces.delete(name);
          else this.namespaces.set(name, labels);
          const wasTerminating = this.terminating.has(name);
          if (labels !== undefined && isTerminating(object as Meta)) this.terminating.add(name);
          else this.terminating.delete(name);
          // Only labels and termination select consumers: any other change (annotations) requeues nothing.
          const terminatingChanged = wasTerminating !== this.terminating.has(name);
          if (terminatingChanged || !sameLabels(before, labels))
            this.options.onChange({ kind: 'namespaces' });
        },
      }),
      runListWatch<unknown>({
        ...common,
        path: '/api/v1/secrets',
        labelSelector: CACHED_SECRETS_SELECTOR,
        list: (s) =>
          page(
            (cont) =>
              this.core.listSecretForAllNamespaces(
                { labelSelector: CACHED_SECRETS_SELECTOR, limit: PAGE, _continue: cont },
                withSignal(s),
              ) as Promise<never>,
          ),
        onList: (items) => {
          const initial = first('secrets');
          const changedSources = this.sources.refs();
          const shares = new Set([...this.copies.values()].map((c) => c.share));
          this.sources.clear();
          this.copies.clear();
          for (const item of items as Meta[]) this.putSecret(item, false);
          for (const [key, ref] of this.sources.refs()) changedSources.set(key, ref);
          for (const c of this.copies.values()) shares.add(c.share);
          if (initial) return;
          for (const ref of changedSources.values()) this.options.onChange({ kind: 'source', ...ref });
          for (const share of shares) this.options.onChange({ kind: 'copy', share });
        },
        onEvent: (type, object) =>
          type === 'DELETED' ? this.removeSecret(object as Meta, true) : this.putSecret(object as Meta, true),
      }),
      ...RBAC_KINDS.map((kind) =>
        runListWatch<unknown>({
          ...common,
          path: `/apis/rbac.authorization.k8s.io/v1/${kind}`,
          list: (s) => this.listRbac(kind, s),
          onList: () => {
            if (!first(kind)) this.options.onChange({ kind: 'rbac' });
          },
          onEvent: () => this.options.onChange({ kind: 'rbac' }),
        }),
      ),
    ];
    this.running = Promise.all(watches);
  }

  private async listRbac(kind: (typeof RBAC_KINDS)[number], signal: AbortSignal): Promise<Listed<unknown>> {
    // Only the version matters: the RBAC objects are read by the API server's reviews, not here.
    const opts = { limit: 1 };
    const call = withSignal(signal);
    const list =
      kind === 'roles'
        ? await this.rbac.listRoleForAllNamespaces(opts, call)
        : kind === 'rolebindings'
          ? await this.rbac.listRoleBindingForAllNamespaces(opts, call)
          : kind === 'clusterroles'
            ? await this.rbac.listClusterRole(opts, call)
            : await this.rbac.listClusterRoleBinding(opts, call);
    return { items: [], resourceVersion: list.metadata?.resourceVersion };
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.running;
  }
}
