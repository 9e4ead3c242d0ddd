import type { TokenBucket } from '../util/token-bucket.js';
import type { CallOptions, SecretStore } from './store.js';

/**
 * Wraps a store so every write (create, add version, delete) first takes a token from `writes`:
 * Secret Manager allows 600 writes a minute per project, and a burst of new clusters must queue
 * rather than fail. Reads pass straight through (the no-op path makes no write).
 */
export function withWriteRateLimit(store: SecretStore, writes: TokenBucket): SecretStore {
  const limited = <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const options = args.at(-1) as CallOptions | undefined;
      await writes.acquire(options?.signal);
      return fn(...args);
    };
  return {
    kind: store.kind,
    maxPayloadBytes: store.maxPayloadBytes,
    location: store.location,
    secretPath: (id) => store.secretPath(id),
    getSecret: (id, o) => store.getSecret(id, o),
    accessLatestEnabled: (id, o) => store.accessLatestEnabled(id, o),
    accessVersion: (id, v, o) => store.accessVersion(id, v, o),
    describe: (id, o) => store.describe(id, o),
    close: () => store.close(),
    createSecret: limited((id: string, labels: Record<string, string>, o?: CallOptions) => store.createSecret(id, labels, o)),
    addVersion: limited((id: string, data: Buffer, o?: CallOptions) => store.addVersion(id, data, o)),
    deleteSecret: limited((id: string, o?: CallOptions) => store.deleteSecret(id, o)),
  };
}
