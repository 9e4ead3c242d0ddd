import { transferRecordId } from '../account-service/transfer-record.js';
import type { KubernetesSecretTarget } from '../kube/target.js';
import { isManaged } from '../pullsecret/identifiers.js';
import { scopeOf } from '../stores/registry.js';
import type { SecretStore } from '../stores/store.js';
import type { WorkTarget } from './outcome.js';
import type { StoreProvider } from './store-provider.js';

/** Where a cluster's secrets live, and what cleanup does with the cloud secret. */
export interface ClusterResources {
  stores: StoreProvider;
  kubernetes?: KubernetesSecretTarget;
  /** What happens to the cloud secret when its cluster is deleted. */
  cloudSecretOnDelete: 'retain' | 'delete';
}

/** What removing a cluster's secrets found and did. */
export interface SecretCleanupResult {
  kubernetesRemoved: boolean;
  cloud: 'retained' | 'deleted' | 'absent';
}

/**
 * The store holding the cluster's cloud secret (the adapter's one question to StoreProvider).
 * @throws PullSecretError CONFIG_INVALID when the store needs a scope (GCP project) the cluster does not name.
 */
export function storeFor(stores: StoreProvider, target: WorkTarget): Promise<SecretStore> {
  return stores.forTarget(target);
}

/**
 * The last step of every executor's cleanup: delete our Kubernetes Secret, then retain or delete the
 * cloud secret. A Secret or cloud secret already gone counts as removed; anything unmanaged is
 * refused, never deleted.
 * @throws PullSecretError from the target or store (STORE_*, KUBE_*, SECRET_UNMANAGED, ABORTED)
 */
export async function removeClusterSecrets(target: WorkTarget, options: ClusterResources, signal: AbortSignal): Promise<SecretCleanupResult> {
  const kubernetesRemoved = options.kubernetes ? await options.kubernetes.remove(target.namespace, target.kubernetesSecretName, { signal }) : false;
  // A cluster that never named its scope (GCP project) never had a cloud secret.
  if (options.stores.scoped(target.provider) && scopeOf(target.store, target.settings) === undefined) return { kubernetesRemoved, cloud: 'absent' };
  const store = await storeFor(options.stores, target);
  const existing = await store.getSecret(target.secretName, { signal });
  if (existing === undefined) return { kubernetesRemoved, cloud: 'absent' };
  if (options.cloudSecretOnDelete !== 'delete' || !isManaged(existing.labels)) return { kubernetesRemoved, cloud: 'retained' };
  // The applied-transfer record (a credential too) goes with it; a foreign one is left alone.
  const record = await store.getSecret(transferRecordId(target.secretName), { signal });
  if (record !== undefined && isManaged(record.labels)) await store.deleteSecret(record.name, { signal });
  return { kubernetesRemoved, cloud: (await store.deleteSecret(target.secretName, { signal })) ? 'deleted' : 'absent' };
}
