import { ENTITLEMENT_KEYS, ENTITLEMENT_SECRET_NAME } from '../entitlements/entitlement.js';
import { pullSecretName } from '../pullsecret/cluster-names.js';
import { DOCKERCONFIGJSON_KEY, PULL_SECRET_TYPE } from '../kube/pull-secret-manifest.js';
import type { SourceKind, SourceMatcher } from '../kube/share-types.js';

/**
 * What a share can copy, one row per `spec.source.kind` (docs/shares.md): the cluster's Secret of that
 * kind in its management namespace, its type and data keys as the adapter writes them. Both kinds
 * are granted by the same access review (`use` on the share) and copied, refreshed and removed alike.
 */
interface SourceKindEntry extends SourceMatcher {
  /** How status messages name the source: `the {noun} Secret {name} of cluster {id}`. */
  noun: string;
  /** Whether the copy may be appended to service accounts' `imagePullSecrets` (registry credentials only). */
  imagePullSecrets: boolean;
}

export const SOURCE_KINDS: Readonly<Record<SourceKind, SourceKindEntry>> = {
  // The adapter's Secret of the cluster's pull secret (src/kube/pull-secret-manifest.ts).
  pullSecret: {
    kind: 'pullSecret',
    noun: 'pull secret',
    secretName: pullSecretName,
    type: PULL_SECRET_TYPE,
    labels: {},
    keys: [DOCKERCONFIGJSON_KEY],
    imagePullSecrets: true,
  },
  // The entitlement certificate and key (src/entitlements/entitlement.ts), refreshed on rotation.
  entitlement: {
    kind: 'entitlement',
    noun: 'entitlement',
    secretName: () => ENTITLEMENT_SECRET_NAME,
    type: 'Opaque',
    labels: { 'resource-type': 'entitlement' },
    keys: [ENTITLEMENT_KEYS.cert, ENTITLEMENT_KEYS.key],
    imagePullSecrets: false,
  },
};

/** True for a `spec.source.kind` the table has. */
export function isSourceKind(value: unknown): value is SourceKind {
  return typeof value === 'string' && Object.hasOwn(SOURCE_KINDS, value);
}
