import { PullSecretError } from '../errors/index.js';
import type { ApplyResult, KubernetesSecretTarget } from '../kube/target.js';
import type { Logger } from '../observability/logger.js';
import { deriveClusterNames } from '../pullsecret/cluster-names.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { isManaged, quoteIdentifier } from '../pullsecret/identifiers.js';
import { redactor } from '../pullsecret/redact.js';
import { validatePullSecret } from '../pullsecret/validate.js';
import { provisionKubernetesSecret } from '../reconcile/provision-kubernetes.js';
import { pushSecret, type PushResult } from '../stores/push.js';
import type { SecretDescription, SecretStore, SecretVersionInfo } from '../stores/store.js';
import { withRetry, type RetryPolicy } from '../util/retry.js';

/** Which cluster, and which version to go back to. */
export interface RollbackRequest {
  clusterId: string;
  /** Cloud secret id; default `hyperfleet-{cluster-id}-pull-secret`. */
  secretName?: string;
  /** Namespace of the Kubernetes Secret; default `clusters-{cluster-id}`. */
  namespace?: string;
  /** The version whose content becomes current again; default the previous one (see `rollbackPullSecret`). */
  toVersion?: string;
}

interface RollbackDeps {
  store: SecretStore;
  /** Where the Kubernetes Secret goes; none = store only. */
  kubernetes?: KubernetesSecretTarget;
  retry: RetryPolicy;
  log: Logger;
  signal?: AbortSignal;
}

/** What a rollback did. Never carries payload bytes but in `push.stored` (callers must not print it). */
export interface RollbackResult {
  secretPath: string;
  /** The version that was current before. */
  fromVersion: string;
  /** The version whose content was restored. */
  sourceVersion: string;
  /** The push of that content (`updated`: a new version; `unchanged`: it was current content already). */
  push: PushResult;
  kubernetes?: ApplyResult;
}

/**
 * Makes an earlier version's content current again, as a NEW version (history stays append-only),
 * then writes the Kubernetes Secret from it (the same provisioning as a reconcile). The default
 * target is the previous version: the newest ENABLED version below the current one (the one in
 * its grace), else the newest version below it. A DISABLED version is enabled for the read and
 * disabled again (its state is left as it was).
 *
 * Calls: describe (GCP: GetSecret + ListSecretVersions), 1 access (+ enable and disable for a
 * disabled version), then the push (access, get, add, access-back) and the Kubernetes apply.
 *
 * @throws PullSecretError SECRET_NOT_FOUND (no secret, no such version, nothing earlier),
 *   SECRET_UNMANAGED (not ours, or another cluster's), VERSION_DESTROYED (that version's payload is
 *   gone), VERSION_NOT_ENABLED (disabled and the store cannot enable versions), or what the store
 *   and target throw.
 */
export async function rollbackPullSecret(
  request: RollbackRequest,
  deps: RollbackDeps,
): Promise<RollbackResult> {
  const names = deriveClusterNames({
    clusterId: request.clusterId,
    secretName: request.secretName,
    namespace: request.namespace,
    kubernetes: deps.kubernetes !== undefined,
  });
  const { store, log, signal } = deps;
  const call = { signal };
  const retried = <T>(fn: () => Promise<T>) => withRetry(deps.retry, fn, { signal });
  const described = await retried(() => store.describe(names.secretId, call));
  if (described === undefined)
    throw new PullSecretError(
      'SECRET_NOT_FOUND',
      `secret ${store.secretPath(names.secretId)} does not exist: nothing to roll back`,
    );
  assertOurs(described, names.clusterId);
  const { current, source } = pickVersions(described, request.toVersion);

  const data = await readVersion(store, names.secretId, source, retried, call);
  const release = redactor.register(credentialStrings(data.toString('utf8')));
  try {
    validatePullSecret(data.toString('utf8'), {
      maxBytes: store.maxPayloadBytes,
      targetName: `${store.kind} store`,
    });
    const push = await pushSecret(
      store,
      { secretId: names.secretId, labels: { ...names.labels }, payload: data },
      {
        retry: deps.retry,
        signal,
        onEvent: ({ level, message, ...fields }) => log[level ?? 'info'](fields, message),
      },
    );
    log.info(
      {
        operation: 'rollback',
        from_version: current.version,
        source_version: source.version,
        version: push.version,
        outcome: push.outcome,
      },
      'Rolled back to an earlier version',
    );
    const result: RollbackResult = {
      secretPath: described.path,
      fromVersion: current.version,
      sourceVersion: source.version,
      push,
    };
    if (deps.kubernetes !== undefined && push.stored !== undefined && push.version !== undefined) {
      result.kubernetes = await provisionKubernetesSecret(
        deps.kubernetes,
        {
          clusterId: names.clusterId,
          namespace: names.namespace,
          stored: push.stored,
          secretPath: push.secretPath,
          version: push.version,
        },
        log,
        signal,
      );
    }
    return result;
  } finally {
    release();
  }
}

function assertOurs(described: SecretDescription, clusterId: string): void {
  if (!isManaged(described.labels)) {
    throw new PullSecretError(
      'SECRET_UNMANAGED',
      `secret ${described.path} is not managed by HyperFleet (label managed-by=hyperfleet is missing); ` +
        `refusing to roll it back`,
    );
  }
  const owner = described.labels['cluster-id'];
  if (owner !== undefined && owner !== clusterId) {
    throw new PullSecretError(
      'SECRET_UNMANAGED',
      `secret ${described.path} belongs to cluster ${quoteIdentifier(owner)}, not ` +
        `${quoteIdentifier(clusterId)}; refusing to roll it back`,
    );
  }
}

/** The current version and the one to restore. */
function pickVersions(
  described: SecretDescription,
  toVersion: string | undefined,
): { current: SecretVersionInfo; source: SecretVersionInfo } {
  // Newest first, as `describe` lists them: ids are opaque (AWS, Azure), so order is the list's.
  const versions = described.versions;
  const currentIndex = versions.findIndex((v) => v.state === 'ENABLED');
  const current = versions[currentIndex];
  if (current === undefined)
    throw new PullSecretError(
      'SECRET_NOT_FOUND',
      `secret ${described.path} has no enabled version: nothing is current to roll back from`,
    );
  let source: SecretVersionInfo | undefined;
  if (toVersion !== undefined) {
    source = versions.find((v) => v.version === toVersion);
    if (source === undefined)
      throw new PullSecretError(
        'SECRET_NOT_FOUND',
        `version ${quoteIdentifier(toVersion)} of ${described.path} does not exist`,
      );
  } else {
    const earlier = versions.slice(currentIndex + 1);
    source = earlier.find((v) => v.state === 'ENABLED') ?? earlier[0];
    if (source === undefined)
      throw new PullSecretError(
        'SECRET_NOT_FOUND',
        `secret ${described.path} has no version before ${current.version}: nothing to roll back to`,
      );
  }
  if (source.state === 'DESTROYED') {
    throw new PullSecretError(
      'VERSION_DESTROYED',
      `version ${source.version} of ${described.path} is destroyed, its content is gone; roll back to ` +
        `another version with --to-version`,
    );
  }
  return { current, source };
}

/** The version's bytes; a disabled version is enabled for the read and disabled again. */
async function readVersion(
  store: SecretStore,
  secretId: string,
  version: SecretVersionInfo,
  retried: <T>(fn: () => Promise<T>) => Promise<T>,
  call: { signal?: AbortSignal | undefined },
): Promise<Buffer> {
  if (version.state === 'ENABLED')
    return (await retried(() => store.accessVersion(secretId, version.version, call))).data;
  if (!canEnable(store)) {
    throw new PullSecretError(
      'VERSION_NOT_ENABLED',
      `version ${version.version} of ${store.secretPath(secretId)} is disabled and the ${store.kind} ` +
        `store cannot enable versions; enable it by hand, then roll back`,
    );
  }
  await retried(() => store.enableVersion(secretId, version.version, call));
  try {
    return (await retried(() => store.accessVersion(secretId, version.version, call))).data;
  } finally {
    await retried(() => store.disableVersion(secretId, version.version, call));
  }
}

/** True when the store can enable and disable versions. */
function canEnable(
  store: SecretStore,
): store is SecretStore & Required<Pick<SecretStore, 'enableVersion' | 'disableVersion'>> {
  return store.enableVersion !== undefined && store.disableVersion !== undefined;
}
