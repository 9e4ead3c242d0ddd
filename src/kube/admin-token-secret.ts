import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import type { StoredTokens, TokenStorage } from '../admin/token-storage.js';
import { fromRecords, type TokenState } from '../admin/token-state.js';
import { PullSecretError } from '../errors/index.js';
import { assertKubernetesName } from '../pullsecret/identifiers.js';
import { createKubeApis } from './client.js';
import { apiFailure, classifyKubeError } from './errors.js';

/**
 * Keys of the admin token Secret. `token` holds the current token alone, so a Prometheus
 * `bearerTokenSecret` or `kubectl get secret -o jsonpath` can use it as it is.
 */
export const ADMIN_TOKEN_KEYS = Object.freeze({
  current: 'token',
  currentGeneratedAt: 'token-generated-at',
  previous: 'previous-token',
  previousGeneratedAt: 'previous-token-generated-at',
});

export interface AdminTokenSecretOptions {
  namespace: string;
  name: string;
  /** Explicit kubeconfig (default: KUBECONFIG, then the in-cluster service account). */
  kubeconfigPath?: string;
  /** A client already built (tests); wins over `kubeconfigPath`. */
  core?: CoreV1Api;
}

const decode = (data: Record<string, string> | undefined, key: string): string | undefined => {
  const value = data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
};

/** The Secret's data for a state (base64 values, as the API wants them). */
function secretData(state: TokenState): Record<string, string> {
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
  const data: Record<string, string> = {
    [ADMIN_TOKEN_KEYS.current]: b64(state.current.token),
    [ADMIN_TOKEN_KEYS.currentGeneratedAt]: b64(new Date(state.current.generatedAt).toISOString()),
  };
  if (state.previous !== undefined) {
    data[ADMIN_TOKEN_KEYS.previous] = b64(state.previous.token);
    data[ADMIN_TOKEN_KEYS.previousGeneratedAt] = b64(new Date(state.previous.generatedAt).toISOString());
  }
  return data;
}

/**
 * Admin tokens in a Kubernetes Secret (type Opaque, labelled `managed-by=hyperfleet`). Writes use
 * optimistic concurrency: a create loses to an existing Secret (409 AlreadyExists), a replace carries
 * the resourceVersion read and loses on 409 Conflict; either way `write` returns false and the caller
 * re-reads. A Secret without `managed-by=hyperfleet` is never overwritten.
 *
 * @throws IDENTIFIER_INVALID for a bad namespace or name; CONFIG_INVALID without a Kubernetes connection
 */
export function secretTokenStorage(options: AdminTokenSecretOptions): TokenStorage {
  const { namespace, name } = options;
  assertKubernetesName(namespace, 'namespace', 63);
  assertKubernetesName(name, 'Secret name', 253);
  const core = options.core ?? createKubeApis({ kubeconfigPath: options.kubeconfigPath }).core;
  const where = `Secret ${namespace}/${name}`;
  const op = (verb: string) => ({ verb, kind: 'Secret', namespace, name });

  async function readSecret(): Promise<V1Secret | undefined> {
    try {
      return await core.readNamespacedSecret({ name, namespace });
    } catch (err) {
      if (apiFailure(err)?.code === 404) return undefined;
      throw classifyKubeError(err, op('read'));
    }
  }

  return {
    where,
    async read(): Promise<StoredTokens | undefined> {
      const secret = await readSecret();
      if (secret === undefined) return undefined;
      const data = secret.data;
      const token = decode(data, ADMIN_TOKEN_KEYS.current);
      const at = decode(data, ADMIN_TOKEN_KEYS.currentGeneratedAt);
      if (token === undefined || at === undefined)
        throw new PullSecretError(
          'CONFIG_INVALID',
          `the admin token ${where} has no ${ADMIN_TOKEN_KEYS.current} or ${ADMIN_TOKEN_KEYS.currentGeneratedAt} key`,
        );
      const previousToken = decode(data, ADMIN_TOKEN_KEYS.previous);
      const previousAt = decode(data, ADMIN_TOKEN_KEYS.previousGeneratedAt);
      const previous =
        previousToken !== undefined && previousAt !== undefined
          ? { token: previousToken, generatedAt: previousAt }
          : undefined;
      return {
        state: fromRecords({ token, generatedAt: at }, previous),
        version: secret.metadata?.resourceVersion ?? '',
      };
    },
    async write(state: TokenState, expected: string | undefined): Promise<boolean> {
      const metadata = {
        name,
        namespace,
        labels: { 'managed-by': 'hyperfleet', 'app.kubernetes.io/component': 'admin-token' },
      };
      try {
        if (expected === undefined) {
          await core.createNamespacedSecret({
            namespace,
            body: { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata, data: secretData(state) },
          });
          return true;
        }
        const existing = await readSecret();
        if (existing === undefined || existing.metadata?.resourceVersion !== expected) return false;
        if (existing.metadata?.labels?.['managed-by'] !== 'hyperfleet') {
          throw new PullSecretError(
            'SECRET_UNMANAGED',
            `the admin token ${where} lacks the label managed-by=hyperfleet; refusing to overwrite it`,
          );
        }
        const body: V1Secret = {
          ...existing,
          metadata: { ...existing.metadata, labels: { ...existing.metadata?.labels, ...metadata.labels } },
          data: { ...existing.data, ...secretData(state) },
        };
        if (state.previous === undefined && body.data) {
          delete body.data[ADMIN_TOKEN_KEYS.previous];
          delete body.data[ADMIN_TOKEN_KEYS.previousGeneratedAt];
        }
        await core.replaceNamespacedSecret({ name, namespace, body });
        return true;
      } catch (err) {
        if (err instanceof PullSecretError) throw err;
        if (apiFailure(err)?.code === 409) return false;
        throw classifyKubeError(err, op(expected === undefined ? 'create' : 'update'));
      }
    },
  };
}
