import type { V1Secret } from '@kubernetes/client-node';
import { PullSecretError } from '../errors/index.js';
import { assertKubernetesName } from '../pullsecret/identifiers.js';
import { createKubeApis, type KubeApis } from './client.js';
import { apiFailure, classifyKubeError } from './errors.js';

interface ManagedSecretOptions {
  namespace: string;
  name: string;
  /** What the Secret holds, for messages (`the admin token`). */
  what: string;
  /** Its `app.kubernetes.io/component` label. */
  component: string;
  /** Explicit kubeconfig (default: KUBECONFIG, then the in-cluster service account). */
  kubeconfigPath?: string;
  /** A client already built (tests); wins over `kubeconfigPath`. */
  core?: KubeApis['core'];
}

/** One Secret of plain-text values (base64 on the wire), written with optimistic concurrency. */
interface ManagedSecret {
  /** `Secret namespace/name`. */
  where: string;
  /** Its decoded data and resourceVersion; `undefined` when there is no such Secret. */
  read(): Promise<{ data: Record<string, string>; version: string } | undefined>;
  /**
   * Creates the Secret (`expected` undefined) or replaces the data of the version `expected` read
   * (a key set to `undefined` is removed). False when another writer came first.
   */
  write(data: Readonly<Record<string, string | undefined>>, expected: string | undefined): Promise<boolean>;
}

const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/**
 * A Kubernetes Secret (type Opaque, labelled `managed-by=hyperfleet`) that a component keeps plain values
 * in. Writes use optimistic concurrency: a create loses to an existing Secret (409 AlreadyExists), a
 * replace carries the resourceVersion read and loses on 409 Conflict; either way `write` returns false
 * and the caller re-reads. A Secret without `managed-by=hyperfleet` is never overwritten.
 *
 * @throws IDENTIFIER_INVALID for a bad namespace or name; CONFIG_INVALID without a Kubernetes connection
 */
export function managedSecret(options: ManagedSecretOptions): ManagedSecret {
  const { namespace, name, what } = options;
  assertKubernetesName(namespace, 'namespace', 63);
  assertKubernetesName(name, 'Secret name', 253);
  const core = options.core ?? createKubeApis({ kubeconfigPath: options.kubeconfigPath }).core;
  const where = `Secret ${namespace}/${name}`;
  const op = (verb: string) => ({ verb, kind: 'Secret', namespace, name });
  const labels = { 'managed-by': 'hyperfleet', 'app.kubernetes.io/component': options.component };

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
    async read() {
      const secret = await readSecret();
      if (secret === undefined) return undefined;
      const data = Object.fromEntries(
        Object.entries(secret.data ?? {}).map(([key, value]) => [
          key,
          Buffer.from(value, 'base64').toString('utf8'),
        ]),
      );
      return { data, version: secret.metadata?.resourceVersion ?? '' };
    },
    async write(values, expected) {
      const set = Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined);
      const encoded = Object.fromEntries(set.map(([key, value]) => [key, encode(value)]));
      try {
        if (expected === undefined) {
          await core.createNamespacedSecret({
            namespace,
            body: {
              apiVersion: 'v1',
              kind: 'Secret',
              type: 'Opaque',
              metadata: { name, namespace, labels },
              data: encoded,
            },
          });
          return true;
        }
        const existing = await readSecret();
        if (existing === undefined || existing.metadata?.resourceVersion !== expected) return false;
        if (existing.metadata?.labels?.['managed-by'] !== 'hyperfleet') {
          throw new PullSecretError(
            'SECRET_UNMANAGED',
            `${what} ${where} lacks the label managed-by=hyperfleet; refusing to overwrite it`,
          );
        }
        const data: Record<string, string> = { ...existing.data, ...encoded };
        for (const [key, value] of Object.entries(values)) if (value === undefined) delete data[key];
        const body: V1Secret = {
          ...existing,
          metadata: { ...existing.metadata, labels: { ...existing.metadata?.labels, ...labels } },
          data,
        };
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
