import { PullSecretError } from '../errors/index.js';
import type { StoreFactory } from '../stores/factory.js';
import { pacedStore, type PacingObserver } from '../stores/rate-limited-store.js';
import { storeFactory } from '../stores/registry.js';
import type { SecretStore } from '../stores/store.js';

export interface StoreProviderOptions {
  /** The store kind (`store.type`). */
  kind: string;
  /** Store settings shared by every scope (endpoint, timeouts, local dir...). */
  config: Readonly<Record<string, unknown>>;
  /** Writes per minute per scope; default the store's declared quota. */
  writesPerMinute?: number;
  /** Metadata reads per minute per scope; default the store's declared quota. */
  readsPerMinute?: number;
  /** Payload accesses per minute per scope; default the store's declared quota. */
  accessesPerMinute?: number;
  /** Quota window in ms (default a minute); tests and the bench shrink it with the test server's. */
  quotaWindowMs?: number;
  /** Observes the quota buckets (feeds `pullsecret_store_quota_tokens`). */
  pacing?: PacingObserver;
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
  get projectScoped(): boolean {
    return this.factory.scope !== undefined;
  }

  /** The store for a scope value (ignored by a store without scope). @throws CONFIG_INVALID for a bad or missing scope. */
  forProject(scope: string): Promise<SecretStore> {
    const key = this.projectScoped ? scope : '';
    let store = this.stores.get(key);
    if (store === undefined) {
      store = this.create(key);
      this.stores.set(key, store);
      // A failed creation (bad scope value) must not be cached for ever.
      store.catch(() => this.stores.delete(key));
    }
    return store;
  }

  private async create(scope: string): Promise<SecretStore> {
    const { config, onApiCall } = this.options;
    const declared = this.factory.scope;
    if (declared !== undefined && scope === '') throw new PullSecretError('CONFIG_INVALID', `the cluster names no ${declared.noun}`);
    const settings = declared === undefined ? config : { ...config, [declared.settingKey]: scope };
    const kind = this.factory.kind;
    const hook = onApiCall && ((method: string, code: string, durationMs: number) => onApiCall(method, code, durationMs, kind));
    const store = await this.factory.create(settings, { onApiCall: hook });
    return pacedStore(store, this.factory.quotas, this.options, { windowMs: this.options.quotaWindowMs, observer: this.options.pacing });
  }

  /** Closes every client. */
  async close(): Promise<void> {
    const stores = [...this.stores.values()];
    this.stores.clear();
    await Promise.all(stores.map(async (s) => (await s.catch(() => undefined))?.close()));
  }
}
