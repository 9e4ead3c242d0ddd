import { PullSecretError } from '../errors/index.js';
import type { KubeApis } from '../kube/client.js';
import { managedSecret } from '../kube/managed-secret.js';
import type { StoredTokens, TokenStorage } from './token-storage.js';
import { fromRecords, type TokenState } from './token-state.js';

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

interface AdminTokenSecretOptions {
  namespace: string;
  name: string;
  /** Explicit kubeconfig (default: KUBECONFIG, then the in-cluster service account). */
  kubeconfigPath?: string;
  /** A client already built (tests); wins over `kubeconfigPath`. */
  core?: KubeApis['core'];
}

/** The Secret's values for a state; without a previous token its keys are removed. */
function secretValues(state: TokenState): Record<string, string | undefined> {
  return {
    [ADMIN_TOKEN_KEYS.current]: state.current.token,
    [ADMIN_TOKEN_KEYS.currentGeneratedAt]: new Date(state.current.generatedAt).toISOString(),
    [ADMIN_TOKEN_KEYS.previous]: state.previous?.token,
    [ADMIN_TOKEN_KEYS.previousGeneratedAt]:
      state.previous === undefined ? undefined : new Date(state.previous.generatedAt).toISOString(),
  };
}

/**
 * Admin tokens in a Kubernetes Secret (type Opaque, labelled `managed-by=hyperfleet`), written with
 * optimistic concurrency (`managedSecret`): `write` returns false when another replica wrote first,
 * and the caller re-reads. A Secret without `managed-by=hyperfleet` is never overwritten.
 *
 * @throws IDENTIFIER_INVALID for a bad namespace or name; CONFIG_INVALID without a Kubernetes connection
 */
export function secretTokenStorage(options: AdminTokenSecretOptions): TokenStorage {
  const secret = managedSecret({ ...options, what: 'the admin token', component: 'admin-token' });
  const where = secret.where;
  return {
    where,
    async read(): Promise<StoredTokens | undefined> {
      const stored = await secret.read();
      if (stored === undefined) return undefined;
      const { data } = stored;
      const token = data[ADMIN_TOKEN_KEYS.current];
      const at = data[ADMIN_TOKEN_KEYS.currentGeneratedAt];
      if (token === undefined || at === undefined)
        throw new PullSecretError(
          'CONFIG_INVALID',
          `the admin token ${where} has no ${ADMIN_TOKEN_KEYS.current} or ${ADMIN_TOKEN_KEYS.currentGeneratedAt} key`,
        );
      const previousToken = data[ADMIN_TOKEN_KEYS.previous];
      const previousAt = data[ADMIN_TOKEN_KEYS.previousGeneratedAt];
      const previous =
        previousToken !== undefined && previousAt !== undefined
          ? { token: previousToken, generatedAt: previousAt }
          : undefined;
      return { state: fromRecords({ token, generatedAt: at }, previous), version: stored.version };
    },
    write: (state: TokenState, expected: string | undefined) => secret.write(secretValues(state), expected),
  };
}
