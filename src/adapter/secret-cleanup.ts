import { transferRecordId } from '../account-service/transfer-record.js';
import { ENTITLEMENT_SECRET_NAME, entitlementSecretId } from '../entitlements/entitlement.js';
import type { KubernetesSecretTarget } from '../kube/target.js';
import { isManaged } from '../pullsecret/identifiers.js';
import { scopeOf } from '../stores/registry.js';
import type { SecretStore } from '../stores/store.js';
import type { WorkTarget } from '../reconcile/outcome.js';
import type { StoreProvider } from '../reconcile/store-provider.js';

/** Where a cluster's secrets live, and what cleanup does with the cloud secret. */
export interface ClusterResources {
  stores: StoreProvider;
  kubernetes?: KubernetesSecretTarget;
  /** What happens to the cloud secret when its cluster is deleted. */
  cloudSecretOnDelete: 'retain' | 'delete';
  /** `entitlements.enabled`: cleanup also removes the cluster's entitlement (Secret and cloud secret). */
  entitlements?: boolean;
}

/** What removing a cluster's secrets found and did. */
interface SecretCleanupResult {
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
 * refused, never deleted. With `entitlements` and a `clusterId`, the cluster's entitlement goes too
 * (`removeEntitlement`).
 * @throws PullSecretError from the target or store (STORE_*, KUBE_*, SECRET_UNMANAGED, ABORTED)
 */
export async function removeClusterSecrets(
  target: WorkTarget,
  options: ClusterResources,
  signal: AbortSignal,
  clusterId?: string,
): Promise<SecretCleanupResult> {
  const kubernetesRemoved = options.kubernetes
    ? await options.kubernetes.remove(target.namespace, target.kubernetesSecretName, { signal })
    : false;
  if (options.entitlements === true && clusterId !== undefined)
    await removeEntitlement(clusterId, target, options, signal);
  // A cluster that never named its scope (GCP project) never had a cloud secret.
  if (options.stores.scoped(target.provider) && scopeOf(target.store, target.settings) === undefined)
    return { kubernetesRemoved, cloud: 'absent' };
  const store = await storeFor(options.stores, target);
  const existing = await store.getSecret(target.secretName, { signal });
  if (existing === undefined) return { kubernetesRemoved, cloud: 'absent' };
  if (options.cloudSecretOnDelete !== 'delete' || !isManaged(existing.labels))
    return { kubernetesRemoved, cloud: 'retained' };
  // The applied-transfer record (a credential too) goes with it; a foreign one is left alone.
  const record = await store.getSecret(transferRecordId(target.secretName), { signal });
  if (record !== undefined && isManaged(record.labels)) await store.deleteSecret(record.name, { signal });
  return {
    kubernetesRemoved,
    cloud: (await store.deleteSecret(target.secretName, { signal })) ? 'deleted' : 'absent',
  };
}

/** Carries our managed-by label and this cluster's `cluster-id` label. */
function ownedBy(labels: Readonly<Record<string, string>>, clusterId: string): boolean {
  return isManaged(labels) && labels['cluster-id'] === clusterId;
}

/**
 * Removes the entitlement the adapter provisioned for a deleted cluster: the Secret
 * `etc-pki-entitlement` in its management namespace, only when it carries our managed-by label and this
 * cluster's `cluster-id` label (a foreign one is left untouched, not refused), and, under the
 * `cloudSecretOnDelete` policy of the pull secret, the managed cloud secret `hyperfleet-{id}-entitlement`
 * (`retain` keeps it). Anything already absent counts as removed.
 * @throws PullSecretError from the target or store (STORE_*, KUBE_*, ABORTED)
 */
async function removeEntitlement(
  clusterId: string,
  target: WorkTarget,
  options: ClusterResources,
  signal: AbortSignal,
): Promise<void> {
  await options.kubernetes?.remove(target.namespace, ENTITLEMENT_SECRET_NAME, {
    signal,
    only: (labels) => ownedBy(labels, clusterId),
  });
  if (options.cloudSecretOnDelete !== 'delete') return;
  if (options.stores.scoped(target.provider) && scopeOf(target.store, target.settings) === undefined) return;
  const store = await storeFor(options.stores, target);
  const stored = await store.getSecret(entitlementSecretId(clusterId), { signal });
  // Its id names the cluster; like the transfer record, a managed one is ours (store label rules vary).
  if (stored !== undefined && isManaged(stored.labels)) await store.deleteSecret(stored.name, { signal });
}
