import { PullSecretError } from '../errors/index.js';
import { assertKubernetesName } from '../pullsecret/identifiers.js';
import type { RetryPolicy } from '../util/retry.js';
import { loadKubeConfig, makeApiClient, withSignal, type KubeApis } from './client.js';
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { apiFailure, classifyKubeError } from './errors.js';
import { listPages, runListWatch } from './list-watch.js';

interface ManagedConfigMapsOptions {
  namespace: string;
  /** Labels every object carries; an object without all of them is not ours: never read, replaced or deleted. */
  labels: Readonly<Record<string, string>>;
  /** Explicit kubeconfig (default: KUBECONFIG, then the in-cluster service account). */
  kubeconfigPath?: string;
  /** A client already built (tests); wins over `kubeconfigPath`. */
  core?: KubeApis['core'];
  /**
   * Keep every ConfigMap with these labels in memory by list and watch (the adapter): `cached` then
   * answers without a call. Absent: no watch (the Job, the CLI).
   */
  watch?: { retry: RetryPolicy; onError?: (fields: Record<string, unknown>) => void };
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
  /**
   * With `watch`, once listed and while the watch holds: the data of our ConfigMap `name` as last
   * seen (null: none), without a call. Otherwise undefined: read instead.
   */
  cached(name: string): Record<string, string> | null | undefined;
  /** Stops the watch. */
  stop(): void;
}

/** The client given, or one (with its KubeConfig, for a watch) from the kubeconfig. */
function connect(options: ManagedConfigMapsOptions): { core: KubeApis['core']; kubeConfig?: KubeConfig } {
  if (options.core !== undefined) return { core: options.core };
  const { kubeConfig } = loadKubeConfig({ kubeconfigPath: options.kubeconfigPath });
  return { core: makeApiClient(kubeConfig, CoreV1Api), kubeConfig };
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
  const { core, kubeConfig } = connect(options);
  const selector = Object.entries(options.labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  // The watched copy: name → data; `synced` while a list has been taken and the watch holds.
  const seen = new Map<string, Record<string, string>>();
  let synced = false;
  const controller = new AbortController();
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

  const keep = (cm: V1ConfigMap): [string, Record<string, string>] => [
    cm.metadata?.name ?? '',
    { ...cm.data },
  ];
  if (options.watch !== undefined && kubeConfig !== undefined) {
    const { retry, onError } = options.watch;
    void runListWatch<[string, Record<string, string>]>({
      kubeConfig,
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`,
      labelSelector: selector,
      signal: controller.signal,
      retry,
      list: (signal) =>
        listPages(
          (cont) =>
            core.listNamespacedConfigMap(
              { namespace, labelSelector: selector, limit: 500, _continue: cont },
              withSignal(signal),
            ),
          keep,
        ).catch((err: unknown) => {
          throw classifyKubeError(err, op('list', selector));
        }),
      onList: (items) => {
        seen.clear();
        for (const [name, data] of items) seen.set(name, data);
        synced = true;
      },
      onEvent: (type, object) => {
        const [name, data] = keep(object as V1ConfigMap);
        if (type === 'DELETED') seen.delete(name);
        else seen.set(name, data);
      },
      onUnsynced: () => (synced = false),
      onError,
    });
  }

  return {
    namespace,
    cached: (name) => (synced ? (seen.get(name) ?? null) : undefined),
    stop: () => controller.abort(),
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
        seen.delete(name);
      } catch (err) {
        if (apiFailure(err)?.code === 404) return false;
        throw classifyKubeError(err, op('delete', name));
      }
      return true;
    },
  };
}
