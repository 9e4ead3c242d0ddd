import { toPullSecretError } from '../errors/index.js';
import type { ApiCallHook } from './factory.js';
import { lifecycle } from './rate-limited-store.js';
import type { SecretStore } from './store.js';

/** The `SecretStore` methods that reach the backend, as `instrumented` reports them. */
export const STORE_METHODS = [
  'getSecret',
  'createSecret',
  'accessLatestEnabled',
  'accessVersion',
  'addVersion',
  'describe',
  'deleteSecret',
  'disableVersion',
  'enableVersion',
  'destroyVersion',
] as const;

type Method = (typeof STORE_METHODS)[number];

/**
 * Wraps a store whose backend has no API of its own (the local store) so each contract call is
 * reported to `onApiCall` as one API call: the method name, `OK` or the error's code, and the
 * duration. A throwing hook never fails the call.
 */
export function instrumented(store: SecretStore, onApiCall: ApiCallHook): SecretStore {
  const timed =
    <A extends unknown[], R>(method: Method, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const started = performance.now();
      let code = 'OK';
      try {
        return await fn(...args);
      } catch (err) {
        code = toPullSecretError(err).code;
        throw err;
      } finally {
        try {
          onApiCall(method, code, performance.now() - started);
        } catch {
          // A metrics hook must never turn a store call into a failure.
        }
      }
    };
  return {
    kind: store.kind,
    maxPayloadBytes: store.maxPayloadBytes,
    ...(store.writesPerCreate === undefined ? {} : { writesPerCreate: store.writesPerCreate }),
    location: store.location,
    secretPath: (id) => store.secretPath(id),
    close: () => store.close(),
    getSecret: timed('getSecret', (id: string, o?) => store.getSecret(id, o)),
    createSecret: timed('createSecret', (id: string, labels: Record<string, string>, o?) =>
      store.createSecret(id, labels, o),
    ),
    accessLatestEnabled: timed('accessLatestEnabled', (id: string, o?) => store.accessLatestEnabled(id, o)),
    accessVersion: timed('accessVersion', (id: string, v: string, o?) => store.accessVersion(id, v, o)),
    addVersion: timed('addVersion', (id: string, data: Buffer, o?) => store.addVersion(id, data, o)),
    describe: timed('describe', (id: string, o?) => store.describe(id, o)),
    deleteSecret: timed('deleteSecret', (id: string, o?) => store.deleteSecret(id, o)),
    ...lifecycle(store, (method, name) => timed(name, method)),
  };
}
