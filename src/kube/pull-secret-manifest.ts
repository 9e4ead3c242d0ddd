import { PullSecretError } from '../errors/index.js';
import { fingerprintParsed } from '../pullsecret/canonical.js';
import {
  defaultManagementNamespace,
  deriveClusterNames,
  type ClusterNames,
} from '../pullsecret/cluster-names.js';
import { MANAGED_BY } from '../pullsecret/identifiers.js';
import { parsePullSecretJson } from '../pullsecret/validate.js';

/** The Secret type HyperShift reads pull secrets from. */
export const PULL_SECRET_TYPE = 'kubernetes.io/dockerconfigjson';
/** The data key of a `kubernetes.io/dockerconfigjson` Secret. */
export const DOCKERCONFIGJSON_KEY = '.dockerconfigjson';
/** A Kubernetes Secret holds at most 1 MiB of data. */
export const MAX_SECRET_BYTES = 1024 * 1024;

/** Annotations we own on the Secret. */
export const ANNOTATIONS = {
  secretPath: 'hyperfleet.io/secret-path',
  secretVersion: 'hyperfleet.io/secret-version',
  lastUpdated: 'hyperfleet.io/last-updated',
  contentSha256: 'hyperfleet.io/content-sha256',
} as const;

/** The Secret we want in the management cluster; plain JSON, no client types, no server fields. */
export interface PullSecretManifest {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
  /** `kubernetes.io/dockerconfigjson` for a pull secret; `Opaque` for the entitlement bundle (`src/entitlements`). */
  type: typeof PULL_SECRET_TYPE | 'Opaque';
  data: Record<string, string>;
}

interface PullSecretManifestInput {
  clusterId: string;
  /** The pull secret bytes exactly as given; stored unchanged. */
  pullSecret: Uint8Array;
  /** Defaults to `clusters-{cluster-id}` (MANAGEMENT_NAMESPACE overrides it). */
  namespace?: string;
  /** Full path of the cloud secret (version-less), e.g. `projects/p/secrets/hyperfleet-x-pull-secret`. */
  secretPath: string;
  /** The cloud secret version the bytes came from. */
  secretVersion: string;
  /** Time for `hyperfleet.io/last-updated`; default now. */
  now?: Date;
  /**
   * The strict parser's value of exactly `pullSecret`, when the caller already parsed these bytes
   * (validation did, and the store gave back the same bytes): saves a second parse per reconcile.
   */
  parsed?: { value: unknown };
  /**
   * The cluster's names as `deriveClusterNames` gave them for this cluster and namespace (Kubernetes
   * checks included), when the caller has them: they are not derived and checked a second time.
   */
  names?: Pick<ClusterNames, 'clusterId' | 'namespace' | 'kubernetesSecretName'>;
}

// Where the names are derived and checked; re-exported for the callers that build manifests.
export { defaultManagementNamespace, pullSecretName } from '../pullsecret/cluster-names.js';

/**
 * Builds the desired Secret for a cluster: name `{cluster-id}-pull-secret`, type
 * `kubernetes.io/dockerconfigjson`, `.dockerconfigjson` = base64 of the bytes as given, labels
 * `managed-by=hyperfleet` and `cluster-id`, annotations for the cloud secret path and version, the
 * update time and the SHA-256 of the canonical JSON (keys sorted), which is how later writes tell
 * whether the content changed. Pure: no I/O.
 *
 * @throws PullSecretError IDENTIFIER_INVALID (cluster id, name or namespace unusable as is),
 *   PULL_SECRET_INVALID (refused by the strict parser validation uses), PAYLOAD_TOO_LARGE (over 1 MiB).
 * Messages never hold the bytes.
 */
export function buildPullSecretManifest(input: PullSecretManifestInput): PullSecretManifest {
  const given = input.names;
  const { kubernetesSecretName: name, namespace } =
    given !== undefined &&
    given.clusterId === input.clusterId &&
    (input.namespace ?? defaultManagementNamespace(input.clusterId)) === given.namespace
      ? given
      : deriveClusterNames({ clusterId: input.clusterId, namespace: input.namespace });
  if (input.pullSecret.length > MAX_SECRET_BYTES) {
    throw new PullSecretError(
      'PAYLOAD_TOO_LARGE',
      `pull secret is ${input.pullSecret.length} bytes; a Kubernetes Secret holds at most ${MAX_SECRET_BYTES}`,
    );
  }
  // The parser validation uses, so this step cannot reach another verdict than the store step did;
  // parsed once, for the check and the fingerprint (or not at all when the caller's parse of the same bytes is given).
  // A view of the bytes, not a copy (Buffer.from of a Buffer copies it).
  const bytes = Buffer.isBuffer(input.pullSecret)
    ? input.pullSecret
    : Buffer.from(input.pullSecret.buffer, input.pullSecret.byteOffset, input.pullSecret.byteLength);
  const parsed =
    input.parsed !== undefined ? input.parsed.value : parsePullSecretJson(bytes.toString('utf8'));
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace,
      labels: { [MANAGED_BY.key]: MANAGED_BY.value, 'cluster-id': input.clusterId },
      annotations: {
        [ANNOTATIONS.secretPath]: input.secretPath,
        [ANNOTATIONS.secretVersion]: input.secretVersion,
        [ANNOTATIONS.lastUpdated]: (input.now ?? new Date()).toISOString(),
        [ANNOTATIONS.contentSha256]: fingerprintParsed(parsed),
      },
    },
    type: PULL_SECRET_TYPE,
    data: { [DOCKERCONFIGJSON_KEY]: bytes.toString('base64') },
  };
}
