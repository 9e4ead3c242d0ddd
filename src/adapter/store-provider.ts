import { createStore } from '../stores/registry.js';
import { withWriteRateLimit } from '../stores/rate-limited-store.js';
import type { SecretStore } from '../stores/store.js';
import { TokenBucket } from '../util/token-bucket.js';
import { PullSecretError } from '../errors/index.js';

export interface StoreProviderOptions {
  /** `local` or `gcp`. */
  kind: string;
  /** Store settings shared by every project (endpoint, timeouts, local dir...). */
  config: Record<string, unknown>;
  /** Secret Manager write quota per project (default 600/min). */
  writesPerMinute: number;
  /** Feeds `pullsecret_gcp_api_calls_total`. */
  onApiCall?: (method: string, code: string, durationMs: number) => void;
}

/**
 * One store client per customer project, created on first use and reused (a gRPC channel per
 * project, not per event), each behind its project's write rate limit. Stores without projects
 * (local) share one client, without a rate limit.
 */
export class StoreProvider {
  private readonly stores = new Map<string, Promise<SecretStore>>();

  constructor(private readonly options: StoreProviderOptions) {}

  /** True when secrets live in a per-cluster cloud project (the cluster must then name one). */
  get projectScoped(): boolean {
    return this.options.kind === 'gcp';
  }

  /** The store for `projectId` (ignored by the local store). @throws CONFIG_INVALID for a bad project id. */
  forProject(projectId: string): Promise<SecretStore> {
    const key = this.projectScoped ? projectId : '';
    let store = this.stores.get(key);
    if (store === undefined) {
      store = this.create(key);
      this.stores.set(key, store);
      // A failed creation (bad project id) must not be cached for ever.
      store.catch(() => this.stores.delete(key));
    }
    return store;
  }

  private async create(projectId: string): Promise<SecretStore> {
    const { kind, config, writesPerMinute, onApiCall } = this.options;
    if (this.projectScoped && projectId === '') throw new PullSecretError('CONFIG_INVALID', 'the cluster names no GCP project');
    if (!this.projectScoped) return createStore(kind, config);
    // The quota is Secret Manager's, per project: the local store has none to protect.
    return withWriteRateLimit(await createStore(kind, { ...config, projectId, onApiCall }), new TokenBucket(writesPerMinute));
  }

  /** Closes every client. */
  async close(): Promise<void> {
    const stores = [...this.stores.values()];
    this.stores.clear();
    await Promise.all(stores.map(async (s) => (await s.catch(() => undefined))?.close()));
  }
}
