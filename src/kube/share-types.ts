/**
 * The PullSecretShare custom resource (cluster-scoped, `pullsecret.hyperfleet.io/v1alpha1`): which
 * cluster's pull secret is shared, with which namespaces and service accounts, and what the adapter
 * found when it projected it. The CRD is `deploy/components/shares/pullsecretshare-crd.yaml`.
 * Here in src/kube, below the share controller (src/shares): the Kubernetes calls on the resource
 * (share-api.ts, share-state.ts) stay with the Kubernetes client in this folder.
 */

export const SHARE_GROUP = 'pullsecret.hyperfleet.io';
export const SHARE_VERSION = 'v1alpha1';
export const SHARE_PLURAL = 'pullsecretshares';
export const SHARE_KIND = 'PullSecretShare';
export const SHARE_API_VERSION = `${SHARE_GROUP}/${SHARE_VERSION}`;

/** Label on every copy: the name of the share it was projected from. */
export const SHARE_LABEL = `${SHARE_GROUP}/share`;
/** Annotation on every copy: SHA-256 of its data, as written. */
export const SHARE_CONTENT_ANNOTATION = `${SHARE_GROUP}/content-sha256`;
/** The verb a consumer must be allowed on the share (like the projected-resource CSI driver's). */
export const USE_VERB = 'use';

/** A Kubernetes label selector (`matchLabels` AND `matchExpressions`). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: {
    key: string;
    operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    values?: string[];
  }[];
}

/** What a share copies: a cluster's pull secret or its entitlement bundle (`etc-pki-entitlement`). */
export type SourceKind = 'pullSecret' | 'entitlement';

/** What is shared: which cluster's Secret of which kind. */
interface ShareSource {
  clusterId: string;
  kind: SourceKind;
}

/**
 * How the share controller tells the source Secret of one kind among the managed Secrets it watches
 * (it also carries `managed-by=hyperfleet` and `cluster-id`, and no share label). The table of kinds
 * is src/shares/source-kinds.ts, above the features whose Secrets it names.
 */
export interface SourceMatcher {
  kind: SourceKind;
  /** The source Secret's name for a cluster. */
  secretName(clusterId: string): string;
  /** Its type: a Secret of another type is no source (and a copy's type is the source's). */
  type: string;
  /** Labels it carries besides `managed-by` and `cluster-id`. */
  labels: Readonly<Record<string, string>>;
  /** The data keys copied; any other key of the source is not. */
  keys: readonly string[];
}

/** Who receives it: namespaces by name and/or selector; the service accounts checked (default: `default`). */
interface ShareConsumers {
  namespaces?: string[];
  namespaceSelector?: LabelSelector;
  serviceAccounts?: string[];
}

/** Where the copy goes in each consumer namespace. */
interface ShareTarget {
  /** Name of the copy; default the share's name. */
  secretName?: string;
  /** Append the copy to the granted service accounts' `imagePullSecrets` (default false). */
  imagePullSecrets?: boolean;
}

/** A share's spec as `parseShareSpec` returns it: checked, defaults filled in. */
export interface ShareSpec {
  source: ShareSource;
  consumers: ShareConsumers & { serviceAccounts: string[] };
  target: Required<ShareTarget>;
}

/** The result for one consumer namespace, as listed in the share's status. */
type ConsumerResult = 'granted' | 'denied' | 'conflict' | 'error';

export interface ConsumerStatus {
  namespace: string;
  result: ConsumerResult;
  /** The copy's name (granted) or the Secret in the way (conflict). */
  secretName?: string;
  /** Service accounts whose access review was denied. */
  deniedServiceAccounts?: string[];
  /** Why, for conflict and error; never Secret data. */
  message?: string;
}

export interface ShareCondition {
  type: 'Ready';
  status: 'True' | 'False';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

export interface ShareStatus {
  observedGeneration?: number;
  conditions: ShareCondition[];
  consumers: ConsumerStatus[];
}

/** A share as the controller keeps it. */
export interface ShareObject {
  name: string;
  uid: string;
  generation?: number;
  /** The raw spec: validated by `parseShareSpec`, reported when invalid. */
  spec: unknown;
  status?: Partial<ShareStatus>;
}
