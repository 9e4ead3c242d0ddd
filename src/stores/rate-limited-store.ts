import type { TokenBucket } from '../util/token-bucket.js';
import type { CallOptions, SecretStore } from './store.js';

/** Token buckets per kind of call; a missing bucket means "not paced". */
export interface RateLimits {
  /** Create, add version, delete. */
  writes?: TokenBucket;
  /** Metadata reads: get and describe (payload reads have their own, much larger quota). */
  reads?: TokenBucket;
}

/**
 * Wraps a store so every call of a paced kind first takes a token from its bucket: Secret Manager
 * allows 600 writes and 600 metadata reads a minute per project, and a burst of clusters must
 * queue rather than fail with RESOURCE_EXHAUSTED. Payload reads pass straight through.
 */
export function withRateLimits(store: SecretStore, limits: RateLimits): SecretStore {
  const paced = <A extends unknown[], R>(bucket: TokenBucket | undefined, fn: (...args: A) => Promise<R>) =>
    bucket === undefined
      ? fn
      : async (...args: A): Promise<R> => {
          const options = args.at(-1) as CallOptions | undefined;
          await bucket.acquire(options?.signal);
          return fn(...args);
        };
  const { writes, reads } = limits;
  return {
    kind: store.kind,
    maxPayloadBytes: store.maxPayloadBytes,
    location: store.location,
    secretPath: (id) => store.secretPath(id),
    accessLatestEnabled: (id, o) => store.accessLatestEnabled(id, o),
    accessVersion: (id, v, o) => store.accessVersion(id, v, o),
    close: () => store.close(),
    getSecret: paced(reads, (id: string, o?: CallOptions) => store.getSecret(id, o)),
    describe: paced(reads, (id: string, o?: CallOptions) => store.describe(id, o)),
    createSecret: paced(writes, (id: string, labels: Record<string, string>, o?: CallOptions) => store.createSecret(id, labels, o)),
    addVersion: paced(writes, (id: string, data: Buffer, o?: CallOptions) => store.addVersion(id, data, o)),
    deleteSecret: paced(writes, (id: string, o?: CallOptions) => store.deleteSecret(id, o)),
  };
}
