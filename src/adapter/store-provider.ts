import { PullSecretError } from '../errors/index.js';
import type { ScopeValues, StoreFactory } from '../stores/factory.js';
import { withRateLimits } from '../stores/rate-limited-store.js';
import { storeFactory } from '../stores/registry.js';
import type { SecretStore } from '../stores/store.js';
import { TokenBucket } from '../util/token-bucket.js';

export interface StoreProviderOptions {
  /** The store kind (`store.type`). */
  kind: string;
  /** Store settings shared by every scope (endpoint, timeouts, local dir...). */
  config: Readonly<Record<string, unknown>>;
  /** Writes per minute per scope; default the store's declared quota. */
  writesPerMinute?: number;
  /** Metadata reads per minute per scope; default the store's declared quota. */
  readsPerMinute?: number;
  /** Observes every backend call, with the store kind (feeds `pullsecret_store_api_calls_total`). */
  onApiCall?: (method: string, code: string, durationMs: number, store: string) => void;
}

/**
 * One store client per quota scope (a customer's GCP project), created on first use and reused (a
 * gRPC channel per scope, not per event), each behind its scope's rate limits. A store without a
 * scope (local) has one client. What a scope is comes from the store's descriptor.
 */
export class StoreProvider {
  private readonly stores = new Map<string, Promise<SecretStore>>();
  private readonly factory: StoreFactory<unknown>;

  /** @throws CONFIG_INVALID for an unknown store kind. */
  constructor(private readonly options: StoreProviderOptions) {
    this.factory = storeFactory(options.kind);
  }

  /** True when the store has a scope that each cluster must name (GCP: its project). */
  get scoped(): boolean {
    return this.factory.scope !== undefined;
  }

  /**
   * The store for a cluster's scope values (ignored by a store without scope): one client per
   * distinct values of the scope's setting keys.
   * @throws CONFIG_INVALID for a bad or missing scope value.
   */
  forScope(scope: ScopeValues | undefined): Promise<SecretStore> {
    const keys = this.factory.scope?.settingKeys ?? [];
    const values = keys.map((k) => scope?.[k] ?? '');
    const key = JSON.stringify(values);
    let store = this.stores.get(key);
    if (store === undefined) {
      store = this.create(Object.fromEntries(keys.map((k, i) => [k, values[i] ?? ''])));
      this.stores.set(key, store);
      // A failed creation (bad scope value) must not be cached for ever.
      store.catch(() => this.stores.delete(key));
    }
    return store;
  }

  private async create(scope: ScopeValues): Promise<SecretStore> {
    const { config, onApiCall } = this.options;
    const declared = this.factory.scope;
    if (declared !== undefined && Object.values(scope).some((v) => v === '')) throw new PullSecretError('CONFIG_INVALID', `the cluster names no ${declared.noun}`);
    const settings = { ...config, ...scope };
    const kind = this.factory.kind;
    const hook = onApiCall && ((method: string, code: string, durationMs: number) => onApiCall(method, code, durationMs, kind));
    const store = await this.factory.create(settings, { onApiCall: hook });
    const writes = this.options.writesPerMinute ?? this.factory.quotas.writesPerMinute;
    const reads = this.options.readsPerMinute ?? this.factory.quotas.readsPerMinute;
    if (writes === undefined && reads === undefined) return store;
    const bucket = (perMinute: number | undefined) => (perMinute === undefined ? undefined : new TokenBucket(perMinute));
    return withRateLimits(store, { writes: bucket(writes), reads: bucket(reads) });
  }

  /** Closes every client. */
  async close(): Promise<void> {
    const stores = [...this.stores.values()];
    this.stores.clear();
    await Promise.all(stores.map(async (s) => (await s.catch(() => undefined))?.close()));
  }
}
