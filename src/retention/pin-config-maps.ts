import type { RetryPolicy } from '../util/retry.js';
import { managedConfigMaps, type ManagedConfigMaps } from '../kube/managed-config-maps.js';
import { assertClusterId } from '../pullsecret/identifiers.js';
import { pinFromFields, type PinStore } from './pin.js';
import { PIN_LABEL, pinConfigMap, pinObjectName } from './pin-objects.js';

interface ConfigMapPinOptions {
  /** Namespace of the pins: the adapter's and the Jobs' own (default `hyperfleet-system`). */
  namespace: string;
  /** Explicit kubeconfig (default: KUBECONFIG, then the in-cluster service account). */
  kubeconfigPath?: string;
  /** ConfigMaps already opened (tests); wins over `namespace` and `kubeconfigPath`. */
  maps?: ManagedConfigMaps;
  /** Watch the pins and answer `get` from memory (the adapter: a no-op reconcile then makes no call). */
  watch?: { retry: RetryPolicy; onError?: (fields: Record<string, unknown>) => void };
}

/**
 * Pins as ConfigMaps `pull-secret-pin-{cluster-id}` in the adapter's namespace, labelled
 * `pullsecret.hyperfleet.io/pin=true` and `managed-by=hyperfleet`: every replica and the Job read
 * the same object, and neither drift repair nor a user deleting the cluster's Secret touches it.
 * A ConfigMap of that name without those labels is never overwritten or deleted.
 *
 * Calls: `get` 1 GET, none when watching (unless `fresh`); `put` 1 GET and 1 create or replace;
 * `delete` 1 GET and 1 DELETE.
 * @throws IDENTIFIER_INVALID for a bad namespace; CONFIG_INVALID without a Kubernetes connection
 */
export function configMapPinStore(options: ConfigMapPinOptions): PinStore {
  const maps =
    options.maps ??
    managedConfigMaps({
      namespace: options.namespace,
      labels: { 'managed-by': 'hyperfleet', [PIN_LABEL]: 'true' },
      kubeconfigPath: options.kubeconfigPath,
      watch: options.watch,
    });
  const name = (clusterId: string) => {
    assertClusterId(clusterId);
    return pinObjectName(clusterId);
  };
  return {
    where: `ConfigMaps in namespace ${maps.namespace}`,
    async get(clusterId, signal, fresh) {
      const cached = fresh === true ? undefined : maps.cached(name(clusterId));
      const data = cached === undefined ? await maps.read(name(clusterId), signal) : (cached ?? undefined);
      return data === undefined
        ? undefined
        : pinFromFields(data, `ConfigMap ${maps.namespace}/${name(clusterId)}`);
    },
    async put(pin, signal) {
      const object = pinConfigMap(pin, maps.namespace);
      await maps.write(name(pin.clusterId), object.data, object.metadata.labels, signal);
    },
    delete: (clusterId, signal) => maps.remove(name(clusterId), signal),
    stop: () => maps.stop(),
  };
}
