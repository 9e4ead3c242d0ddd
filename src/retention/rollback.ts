import { PullSecretError, toPullSecretError } from '../errors/index.js';
import type { ApplyResult, KubernetesSecretTarget } from '../kube/target.js';
import type { Logger } from '../observability/logger.js';
import { deriveClusterNames } from '../pullsecret/cluster-names.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { isManaged, quoteIdentifier } from '../pullsecret/identifiers.js';
import { redactor } from '../pullsecret/redact.js';
import { fingerprint } from '../pullsecret/canonical.js';
import { validatePullSecret } from '../pullsecret/validate.js';
import { provisionKubernetesSecret } from '../reconcile/provision-kubernetes.js';
import { pushSecret, type PushResult } from '../stores/push.js';
import type { SecretDescription, SecretStore, SecretVersionInfo } from '../stores/store.js';
import { withRetry, type RetryPolicy } from '../util/retry.js';
import { pinExpired, type Pin, type PinStore } from './pin.js';

/** Which cluster, and which version to go back to. */
export interface RollbackRequest {
  clusterId: string;
  /** Cloud secret id; default `hyperfleet-{cluster-id}-pull-secret`. */
  secretName?: string;
  /** Namespace of the Kubernetes Secret; default `clusters-{cluster-id}`. */
  namespace?: string;
  /** The version whose content becomes current again; default the previous one (see `rollbackPullSecret`). */
  toVersion?: string;
  /** Who rolls back (the admin caller, the CLI user), recorded in the pin. */
  by?: string;
  /** Why, recorded in the pin. */
  reason?: string;
  /** When the pin ends by itself (RFC 3339); none: until the spec changes or a release. */
  expiresAt?: string;
  /** SHA-256 of the spec's pull secret now (canonical form), when the caller read it: a different one ends the pin. */
  specSha256?: string;
}

interface RollbackDeps {
  store: SecretStore;
  /** Where the Kubernetes Secret goes; none = store only. */
  kubernetes?: KubernetesSecretTarget;
  retry: RetryPolicy;
  log: Logger;
  signal?: AbortSignal;
  /** Where the pin goes (docs/retention.md, "Rollback and pin"); none: no pin, the next reconcile serves the spec. */
  pins?: PinStore;
  /**
   * Told once the version is written and the pin completed, before the Kubernetes Secret: from then
   * on the rollback has succeeded (the pin makes every later reconcile serve it).
   */
  onWritten?: (result: RollbackResult) => void;
  /** False: the Kubernetes Secret is left to a reconcile (Job mode: the Job writes it, the adapter may not). */
  writeKubernetes?: boolean;
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
  /** The pin recorded (absent without a pin store). */
  pin?: Pin;
}

/**
 * Makes an earlier version's content current again, as a NEW version (history stays append-only),
 * pins it (docs/retention.md, "Rollback and pin": every later reconcile serves it until the spec's
 * pull secret changes, a release or the expiry), then writes the Kubernetes Secret from it (the
 * same provisioning as a reconcile). The default target is the previous version: the newest
 * ENABLED version below the current one (the one in its grace), else the newest version below it;
 * while a pin holds, the pinned one. A DISABLED version is enabled for the read and disabled again.
 * Repeated while its pin holds and its version is current, it writes nothing (idempotent).
 *
 * Order: everything is checked and read first, then the pin is recorded (pending), the version
 * written, the pin completed with that version (`onWritten`), and the Kubernetes Secret written.
 *
 * Calls: describe (GCP: GetSecret + ListSecretVersions), 1 access (+ enable and disable for a
 * disabled version), then the push (access, get, add, access-back), 2 pin writes and the
 * Kubernetes apply; a repeat: the pin read and the describe only.
 *
 * @throws PullSecretError SECRET_NOT_FOUND (no secret, no such version, nothing earlier),
 *   SECRET_UNMANAGED (not ours, or another cluster's), VERSION_DESTROYED (that version's payload is
 *   gone), VERSION_NOT_ENABLED (disabled and the store cannot enable versions), or what the store,
 *   the pin store and the target throw.
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
  const { store, log, signal, pins } = deps;
  const call = { signal };
  const retried = <T>(fn: () => Promise<T>) => withRetry(deps.retry, fn, { signal });
  const held = await pins?.get(names.clusterId, signal);
  const existing = held !== undefined && !pinExpired(held) ? held : undefined;
  const described = await retried(() => store.describe(names.secretId, call));
  if (described === undefined)
    throw new PullSecretError(
      'SECRET_NOT_FOUND',
      `secret ${store.secretPath(names.secretId)} does not exist: nothing to roll back`,
    );
  assertOurs(described, names.clusterId);
  const { current, source } = pickVersions(described, request.toVersion ?? existing?.sourceVersion);
  if (existing?.sourceVersion === source.version && existing.version === current.version) {
    log.info(
      {
        operation: 'rollback',
        source_version: source.version,
        version: current.version,
        outcome: 'unchanged',
      },
      'Rollback already in place: its pin holds',
    );
    const push: PushResult = { outcome: 'unchanged', secretPath: described.path, version: current.version };
    const result: RollbackResult = {
      secretPath: described.path,
      fromVersion: current.version,
      sourceVersion: source.version,
      push,
      pin: existing,
    };
    deps.onWritten?.(result);
    return result;
  }

  const data = await readVersion(store, names.secretId, source, retried, call);
  const release = redactor.register(credentialStrings(data.toString('utf8')));
  try {
    validatePullSecret(data.toString('utf8'), {
      maxBytes: store.maxPayloadBytes,
      targetName: `${store.kind} store`,
    });
    let pin: Pin | undefined;
    if (pins === undefined) {
      log.warn(
        { operation: 'rollback', source_version: source.version },
        'No place for a rollback pin (no Kubernetes target): the next reconcile serves the spec again',
      );
    } else {
      pin = newPin(names, source.version, fingerprint(data), request, existing);
      await pins.put(pin, signal);
    }
    let push: PushResult;
    try {
      push = await pushSecret(
        store,
        { secretId: names.secretId, labels: { ...names.labels }, payload: data },
        {
          retry: deps.retry,
          signal,
          onEvent: ({ level, message, ...fields }) => log[level ?? 'info'](fields, message),
        },
      );
    } catch (err) {
      // Not written: the pending pin goes (the pin before it comes back), so nothing serves it.
      if (pins !== undefined && pin !== undefined) await undoPending(pins, names.clusterId, existing, log);
      throw err;
    }
    if (pins !== undefined && pin !== undefined && push.version !== undefined) {
      pin = { ...pin, version: push.version };
      await pins.put(pin, signal);
    }
    log.info(
      {
        operation: 'rollback',
        from_version: current.version,
        source_version: source.version,
        version: push.version,
        outcome: push.outcome,
        pinned: pin !== undefined,
      },
      'Rolled back to an earlier version',
    );
    const result: RollbackResult = {
      secretPath: described.path,
      fromVersion: current.version,
      sourceVersion: source.version,
      push,
    };
    if (pin !== undefined) result.pin = pin;
    deps.onWritten?.({ ...result });
    if (
      deps.kubernetes !== undefined &&
      deps.writeKubernetes !== false &&
      push.stored !== undefined &&
      push.version !== undefined
    ) {
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

/** Puts back the pin a failed rollback replaced, or removes its pending one (without the caller's signal). */
async function undoPending(
  pins: PinStore,
  clusterId: string,
  before: Pin | undefined,
  log: Logger,
): Promise<void> {
  try {
    if (before === undefined) await pins.delete(clusterId);
    else await pins.put(before);
  } catch (err) {
    log.warn(
      { operation: 'rollback-pin', error_code: toPullSecretError(err).code },
      'Could not remove the pending rollback pin; release it (pull-secret rollback --release)',
    );
  }
}

/** The pending pin (no version yet); a rollback to the content already pinned keeps its spec digest. */
function newPin(
  names: { clusterId: string; secretId: string },
  sourceVersion: string,
  contentSha256: string,
  request: RollbackRequest,
  existing: Pin | undefined,
): Pin {
  const pin: Pin = {
    clusterId: names.clusterId,
    secretId: names.secretId,
    sourceVersion,
    contentSha256,
    by: request.by ?? 'unknown',
    at: new Date().toISOString(),
  };
  const specSha256 = request.specSha256 ?? existing?.specSha256;
  if (specSha256 !== undefined) pin.specSha256 = specSha256;
  if (request.reason !== undefined) pin.reason = request.reason;
  if (request.expiresAt !== undefined) pin.expiresAt = request.expiresAt;
  return pin;
}

/**
 * Ends the cluster's pin (`pull-secret rollback --release`, the admin API); true when there was
 * one. The next reconcile serves the spec again.
 */
export async function releasePin(
  clusterId: string,
  deps: { pins: PinStore; log: Logger; by?: string; signal?: AbortSignal },
): Promise<boolean> {
  const had = await deps.pins.delete(clusterId, deps.signal);
  deps.log.info(
    { operation: 'rollback-pin', cluster_id: clusterId, ended: 'released', by: deps.by, had_pin: had },
    had ? 'Rollback pin ended: serving the spec again' : 'No rollback pin to release',
  );
  return had;
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
