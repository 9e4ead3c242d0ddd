import type { V1ConfigMap } from '@kubernetes/client-node';
import { PullSecretError } from '../errors/index.js';
import { assertKubernetesName } from '../pullsecret/identifiers.js';
import { createKubeApis, withSignal, type KubeApis } from './client.js';
import { apiFailure, classifyKubeError } from './errors.js';

interface ManagedConfigMapsOptions {
  namespace: string;
  /** Labels every object carries; an object without all of them is not ours: never read, replaced or deleted. */
  labels: Readonly<Record<string, string>>;
  /** Explicit kubeconfig (default: KUBECONFIG, then the in-cluster service account). */
  kubeconfigPath?: string;
  /** A client already built (tests); wins over `kubeconfigPath`. */
  core?: KubeApis['core'];
}

/** ConfigMaps of plain string values in one namespace that a component owns (by its labels). */
export interface ManagedConfigMaps {
  readonly namespace: string;
  /** The data of our ConfigMap `name`; undefined when absent or not ours. */
  read(name: string, signal?: AbortSignal): Promise<Record<string, string> | undefined>;
  /** Creates or replaces the data (labels and annotations others added stay). */
  write(
    name: string,
    data: Record<string, string>,
    labels: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<void>;
  /** Deletes our ConfigMap `name`; true when there was one. */
  remove(name: string, signal?: AbortSignal): Promise<boolean>;
}

/**
 * ConfigMaps one component keeps small records in (the rollback pins), told apart by its labels.
 * Calls: `read` 1 GET; `write` 1 GET and 1 create or replace (with the resourceVersion read: a lost
 * race is a 409, KUBE_CONFLICT, retryable); `remove` 1 GET and 1 DELETE.
 * @throws IDENTIFIER_INVALID for a bad namespace or name; CONFIG_INVALID without a Kubernetes
 *   connection; SECRET_UNMANAGED when a ConfigMap of that name is not ours; classified API errors
 */
export function managedConfigMaps(options: ManagedConfigMapsOptions): ManagedConfigMaps {
  const { namespace } = options;
  assertKubernetesName(namespace, 'namespace', 63);
  const core = options.core ?? createKubeApis({ kubeconfigPath: options.kubeconfigPath }).core;
  const op = (verb: string, name: string) => ({ verb, kind: 'ConfigMap', namespace, name });
  const ours = (cm: V1ConfigMap) =>
    Object.entries(options.labels).every(([k, v]) => cm.metadata?.labels?.[k] === v);

  async function get(name: string, signal?: AbortSignal): Promise<V1ConfigMap | undefined> {
    assertKubernetesName(name, 'ConfigMap name', 253);
    try {
      return await core.readNamespacedConfigMap({ name, namespace }, withSignal(signal));
    } catch (err) {
      if (apiFailure(err)?.code === 404) return undefined;
      throw classifyKubeError(err, op('read', name));
    }
  }

  return {
    namespace,
    async read(name, signal) {
      const cm = await get(name, signal);
      return cm === undefined || !ours(cm) ? undefined : { ...cm.data };
    },
    async write(name, data, labels, signal) {
      const existing = await get(name, signal);
      if (existing !== undefined && !ours(existing))
        throw new PullSecretError(
          'SECRET_UNMANAGED',
          `ConfigMap ${namespace}/${name} exists without our labels; refusing to overwrite it`,
        );
      const metadata = {
        ...existing?.metadata,
        name,
        namespace,
        labels: { ...existing?.metadata?.labels, ...labels, ...options.labels },
      };
      const body: V1ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata, data };
      try {
        if (existing === undefined)
          await core.createNamespacedConfigMap({ namespace, body }, withSignal(signal));
        else await core.replaceNamespacedConfigMap({ name, namespace, body }, withSignal(signal));
      } catch (err) {
        throw classifyKubeError(err, op(existing === undefined ? 'create' : 'replace', name));
      }
    },
    async remove(name, signal) {
      const existing = await get(name, signal);
      if (existing === undefined || !ours(existing)) return false;
      try {
        await core.deleteNamespacedConfigMap({ name, namespace }, withSignal(signal));
      } catch (err) {
        if (apiFailure(err)?.code === 404) return false;
        throw classifyKubeError(err, op('delete', name));
      }
      return true;
    },
  };
}
