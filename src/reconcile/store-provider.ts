import { PullSecretError } from '../errors/index.js';
import type { StoreFactory } from '../stores/factory.js';
import {
  quotaLimits,
  withRateLimits,
  type PacingObserver,
  type QuotaKind,
  type RateLimits,
} from '../stores/rate-limited-store.js';
import { scopeOf, storeFactory } from '../stores/registry.js';
import type { SecretStore } from '../stores/store.js';

/** One provider's store: its kind, shared settings and rate overrides. */
export interface StoreRouteOptions {
  /** The store kind. */
  kind: string;
  /** Store settings shared by every cluster of the provider (endpoint, timeouts, local dir...). */
  config: Readonly<Record<string, unknown>>;
  /** Writes per minute per scope; default the store's declared quota. */
  writesPerMinute?: number;
  /** Metadata reads per minute per scope; default the store's declared quota. */
  readsPerMinute?: number;
  /** Payload accesses per minute per scope; default the store's declared quota. */
  accessesPerMinute?: number;
}

export interface StoreProviderOptions {
  /** The stores by provider key (`*`: any provider). */
  routes: Readonly<Record<string, StoreRouteOptions>>;
  /** Quota window in ms (default a minute); tests and the bench shrink it with the test server's. */
  quotaWindowMs?: number;
  /** Observes the quota buckets (feeds `pullsecret_store_quota_tokens`). */
  pacing?: PacingObserver;
  /** Observes every backend call, with the store kind (feeds `pullsecret_store_api_calls_total`). */
  onApiCall?: (method: string, code: string, durationMs: number, store: string) => void;
}

/** What locates a cluster's store: its provider key and the store settings the cluster gives. */
export interface StoreTarget {
  provider: string;
  settings: Readonly<Record<string, string>>;
}

/**
 * The stores of every provider, in one process. One client per provider and distinct per-cluster
 * settings (a customer's GCP project and key: a gRPC channel per project, not per event), created
 * on first use and reused; every client of one quota scope (store kind and scope values: a GCP
 * project, an AWS account and region, an Azure vault) shares that scope's token buckets, so a
 * quota is paced once however many clusters or keys use it. A store without a scope (local) has
 * one client per provider. What a scope is comes from the store's descriptor.
 */
export class StoreProvider {
  private readonly stores = new Map<string, Promise<SecretStore>>();
  private readonly buckets = new Map<string, { kind: string; limits: RateLimits }>();
  private readonly routes: ReadonlyMap<
    string,
    { options: StoreRouteOptions; factory: StoreFactory<unknown> }
  >;

  /** @throws CONFIG_INVALID for an unknown store kind. */
  constructor(private readonly options: StoreProviderOptions) {
    this.routes = new Map(
      Object.entries(options.routes).map(([key, route]) => [
        key,
        { options: route, factory: storeFactory(route.kind) },
      ]),
    );
  }

  /** One store for every cluster (`*`): the single-store case. */
  static single(route: StoreRouteOptions, options: Omit<StoreProviderOptions, 'routes'> = {}): StoreProvider {
    return new StoreProvider({ ...options, routes: { '*': route } });
  }

  /** True when the provider's store has a scope that each cluster must name (GCP: its project). */
  scoped(provider: string): boolean {
    return this.routes.get(provider)?.factory.scope !== undefined;
  }

  /**
   * The store of a cluster: its provider's store with the cluster's settings.
   * @throws CONFIG_INVALID for a provider no route serves, or a bad or missing scope value.
   */
  forTarget(target: StoreTarget): Promise<SecretStore> {
    const route = this.routes.get(target.provider);
    if (route === undefined)
      return Promise.reject(
        new PullSecretError('CONFIG_INVALID', `no store serves provider ${target.provider}`),
      );
    const key = storeKey(target);
    let store = this.stores.get(key);
    if (store === undefined) {
      store = this.create(route.options, route.factory, target.settings);
      this.stores.set(key, store);
      // A failed creation (bad scope value) must not be cached for ever.
      store.catch(() => this.stores.delete(key));
    }
    return store;
  }

  private async create(
    route: StoreRouteOptions,
    factory: StoreFactory<unknown>,
    settings: Readonly<Record<string, string>>,
  ): Promise<SecretStore> {
    const declared = factory.scope;
    const scope = scopeOf(factory.kind, settings);
    if (declared !== undefined && scope === undefined)
      throw new PullSecretError('CONFIG_INVALID', `the cluster names no ${declared.noun}`);
    const kind = factory.kind;
    const onApiCall = this.options.onApiCall;
    const hook =
      onApiCall &&
      ((method: string, code: string, durationMs: number) => onApiCall(method, code, durationMs, kind));
    const store = await factory.create({ ...route.config, ...settings }, { onApiCall: hook });
    const limits = this.bucketsOf(factory, scope ?? {}, route);
    return Object.keys(limits).length === 0 ? store : withRateLimits(store, limits, this.options.pacing);
  }

  /** The token buckets of one quota scope (store kind and scope values), made by its first client and shared by all. */
  private bucketsOf(
    factory: StoreFactory<unknown>,
    scope: Readonly<Record<string, string>>,
    route: StoreRouteOptions,
  ): RateLimits {
    const key = JSON.stringify([factory.kind, Object.entries(scope)]);
    let entry = this.buckets.get(key);
    if (entry === undefined) {
      entry = { kind: factory.kind, limits: quotaLimits(factory.quotas, route, this.options.quotaWindowMs) };
      this.buckets.set(key, entry);
      for (const [quota, bucket] of Object.entries(entry.limits))
        this.options.pacing?.track(factory.kind, quota as QuotaKind, bucket);
    }
    return entry.limits;
  }

  /**
   * Loads the SDK of every routed store kind (`StoreFactory.preload`), so the first events after a
   * start do not wait for it (GCP: about 300 ms of CPU, which a cold burst of no-op events paid).
   */
  async preload(): Promise<void> {
    const kinds = new Map([...this.routes.values()].map(({ factory }) => [factory.kind, factory]));
    await Promise.all([...kinds.values()].map((factory) => factory.preload?.() ?? Promise.resolve()));
  }

  /** Closes every client. */
  async close(): Promise<void> {
    const stores = [...this.stores.values()];
    this.stores.clear();
    for (const { kind, limits } of this.buckets.values()) {
      for (const [quota, bucket] of Object.entries(limits))
        this.options.pacing?.untrack(kind, quota as QuotaKind, bucket);
    }
    this.buckets.clear();
    await Promise.all(stores.map(async (s) => (await s.catch(() => undefined))?.close()));
  }
}

/**
 * The key of a provider's client for some settings, whatever their order. Keys sorted by code unit
 * (`sort()`), not `localeCompare`: the order only has to be the same each time, and a locale-aware
 * collation is not needed for that.
 */
function storeKey(target: StoreTarget): string {
  const { settings } = target;
  return JSON.stringify([
    target.provider,
    Object.keys(settings)
      .sort()
      .map((name) => [name, settings[name]]),
  ]);
}
