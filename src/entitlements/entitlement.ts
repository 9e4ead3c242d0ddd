import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AccountServiceClient, EntitlementCertificate } from '../account-service/client.js';
import {
  CLOUD_REGISTRY,
  cloudToken,
  transferBackoff,
  TRANSFER_REASONS,
  TRANSFER_RETRY_STEPS,
} from '../account-service/transfer-check.js';
import { PullSecretError, toPullSecretError } from '../errors/index.js';
import { ANNOTATIONS, type PullSecretManifest } from '../kube/pull-secret-manifest.js';
import type { ApplyResult, KubernetesSecretTarget } from '../kube/target.js';
import { deriveClusterNames } from '../pullsecret/cluster-names.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { MANAGED_BY, managedLabels } from '../pullsecret/identifiers.js';
import { redactor } from '../pullsecret/redact.js';
import { pushSecret, type PushOptions, type PushResult } from '../stores/push.js';
import type { SecretStore } from '../stores/store.js';

/** Name of the Kubernetes Secret the entitlement is provisioned as (what builds mount at `/etc/pki/entitlement`). */
export const ENTITLEMENT_SECRET_NAME = 'etc-pki-entitlement';
/** Data keys of that Secret. */
export const ENTITLEMENT_KEYS = { cert: 'entitlement.pem', key: 'entitlement-key.pem' } as const;
/** Default architecture asked for. */
export const DEFAULT_ENTITLEMENT_ARCH = 'x86_64';

/** Cloud secret id of a cluster's entitlement, beside `hyperfleet-{id}-pull-secret`. */
export function entitlementSecretId(clusterId: string): string {
  return `hyperfleet-${clusterId}-entitlement`;
}

/** The pull secret's managed labels with `resource-type=entitlement`. */
function entitlementLabels(clusterId: string): Record<string, string> {
  return { ...managedLabels(clusterId), 'resource-type': 'entitlement' };
}

/** The stored form: canonical JSON `{"cert":…,"key":…}` (keys sorted, no spaces), so equal content is equal bytes. */
function entitlementPayload(certificate: Pick<EntitlementCertificate, 'cert' | 'key'>): Buffer {
  return Buffer.from(JSON.stringify({ cert: certificate.cert, key: certificate.key }), 'utf8');
}

/** The key's credential strings (its base64 lines and the whole PEM), for the redactor. */
export function keyStrings(key: string): string[] {
  return [key, ...key.split(/\r?\n/).filter((line) => line.length > 0 && !line.startsWith('-----'))];
}

/**
 * The desired Secret `etc-pki-entitlement` (type Opaque, `entitlement.pem`, `entitlement-key.pem`)
 * in the cluster's management namespace, labelled as managed, annotated with the cloud secret path
 * and version and the SHA-256 of the stored payload (how later writes tell the content changed).
 *
 * @throws IDENTIFIER_INVALID for an unusable cluster id or namespace
 */
function buildEntitlementManifest(input: {
  clusterId: string;
  namespace?: string;
  cert: string;
  key: string;
  secretPath: string;
  secretVersion: string;
  now?: Date;
}): PullSecretManifest {
  const { namespace } = deriveClusterNames({ clusterId: input.clusterId, namespace: input.namespace });
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: ENTITLEMENT_SECRET_NAME,
      namespace,
      labels: {
        [MANAGED_BY.key]: MANAGED_BY.value,
        'cluster-id': input.clusterId,
        'resource-type': 'entitlement',
      },
      annotations: {
        [ANNOTATIONS.secretPath]: input.secretPath,
        [ANNOTATIONS.secretVersion]: input.secretVersion,
        [ANNOTATIONS.lastUpdated]: (input.now ?? new Date()).toISOString(),
        [ANNOTATIONS.contentSha256]: createHash('sha256').update(entitlementPayload(input)).digest('hex'),
      },
    },
    type: 'Opaque',
    data: {
      [ENTITLEMENT_KEYS.cert]: Buffer.from(input.cert, 'utf8').toString('base64'),
      [ENTITLEMENT_KEYS.key]: Buffer.from(input.key, 'utf8').toString('base64'),
    },
  };
}

/**
 * What one refresh came to. The failure kinds and their reasons are the account service's
 * (`TRANSFER_REASONS`: `no-token`, `refused`, `unexpected`, `unreachable`); `failed` is a store or
 * Kubernetes error after a certificate was obtained. Messages never hold a credential.
 */
export type EntitlementOutcome =
  | {
      kind: 'refreshed';
      stored: PushResult['outcome'];
      version?: string;
      secret?: ApplyResult['outcome'];
      expiresAt: string;
    }
  | { kind: 'no-token'; message: string }
  | { kind: 'refused'; message: string; error: PullSecretError }
  | { kind: 'unexpected'; message: string; error: PullSecretError }
  | { kind: 'unreachable'; attempts: number; message: string; error: PullSecretError }
  | { kind: 'failed'; message: string; error: PullSecretError };

/** Condition reason and metric label of each outcome; the account-service ones are shared with transfers. */
export const ENTITLEMENT_REASONS = {
  refreshed: { reason: 'EntitlementRefreshed', label: 'refreshed' },
  'no-token': TRANSFER_REASONS['no-token'],
  refused: TRANSFER_REASONS.refused,
  unexpected: TRANSFER_REASONS.unexpected,
  unreachable: TRANSFER_REASONS.unreachable,
  failed: { reason: 'EntitlementWriteFailed', label: 'failed' },
} as const satisfies Record<EntitlementOutcome['kind'], { reason: string; label: string }>;

interface RefreshEntitlementOptions {
  client: AccountServiceClient;
  store: SecretStore;
  push: PushOptions;
  /** Where the Secret goes; omitted: stored only. */
  target?: KubernetesSecretTarget;
  /** Management namespace (default `clusters-{id}`). */
  namespace?: string;
  /** Architecture asked for (default x86_64). */
  arch?: string;
  /** The refresh interval; sets the 5xx backoff like transfer checks (`transferBackoff`). */
  intervalMs: number;
  /** Retries of 5xx answers (0-5, default 5). */
  retries?: number;
  /** Waits between retries (injectable for tests). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
}

/**
 * Obtains the cluster's entitlement certificate with its pull secret's `cloud.openshift.com` token,
 * stores it as `hyperfleet-{id}-entitlement` (no write when unchanged: `pushSecret`) and applies the
 * `etc-pki-entitlement` Secret (no write when up to date). 5xx answers are retried by the transfer
 * checks' backoff; 4xx and contract breaks are not. The token and the key are registered with the
 * redactor while it runs. Never throws except ABORTED.
 */
export async function refreshEntitlement(
  clusterId: string,
  pullSecret: Uint8Array,
  options: RefreshEntitlementOptions,
): Promise<EntitlementOutcome> {
  const releases = [redactor.register(credentialStrings(Buffer.from(pullSecret).toString('utf8')))];
  try {
    const token = cloudToken(pullSecret);
    if (token === undefined)
      return {
        kind: 'no-token',
        message:
          `the cluster's pull secret has no ${CLOUD_REGISTRY} entry with an auth; it cannot ask ` +
          `for an entitlement certificate`,
      };
    const fetched = await fetchWithBackoff(clusterId, token, options);
    if (!('cert' in fetched)) return fetched;
    releases.push(redactor.register(keyStrings(fetched.key)));
    return await storeAndProvision(clusterId, fetched, options);
  } finally {
    for (const release of releases) release();
  }
}

async function fetchWithBackoff(
  clusterId: string,
  token: string,
  options: RefreshEntitlementOptions,
): Promise<
  EntitlementCertificate | Exclude<EntitlementOutcome, { kind: 'refreshed' | 'failed' | 'no-token' }>
> {
  const delays = transferBackoff(options.intervalMs).slice(0, options.retries ?? TRANSFER_RETRY_STEPS);
  const wait = options.sleep ?? ((ms: number, signal?: AbortSignal) => sleep(ms, undefined, { signal }));
  for (let attempt = 1; ; attempt++) {
    try {
      return await options.client.certificate(
        clusterId,
        token,
        options.arch ?? DEFAULT_ENTITLEMENT_ARCH,
        options.signal,
      );
    } catch (err) {
      const error = toPullSecretError(err);
      if (error.code === 'ABORTED') throw error;
      if (error.code === 'ACCOUNT_SERVICE_UNAVAILABLE') {
        const delayMs = delays[attempt - 1];
        if (delayMs === undefined)
          return { kind: 'unreachable', attempts: attempt, message: error.message, error };
        try {
          await wait(delayMs, options.signal);
        } catch (abort) {
          throw new PullSecretError('ABORTED', 'operation aborted while waiting to retry', { cause: abort });
        }
        continue;
      }
      if (error.code === 'ACCOUNT_SERVICE_REFUSED') return { kind: 'refused', message: error.message, error };
      return { kind: 'unexpected', message: error.message, error };
    }
  }
}

async function storeAndProvision(
  clusterId: string,
  certificate: EntitlementCertificate,
  options: RefreshEntitlementOptions,
): Promise<EntitlementOutcome> {
  const expiresAt = certificate.expiresAt.toISOString();
  try {
    const pushed = await pushSecret(
      options.store,
      {
        secretId: entitlementSecretId(clusterId),
        labels: entitlementLabels(clusterId),
        payload: entitlementPayload(certificate),
      },
      options.push,
    );
    let secret: ApplyResult['outcome'] | undefined;
    if (options.target !== undefined) {
      const manifest = buildEntitlementManifest({
        clusterId,
        namespace: options.namespace,
        cert: certificate.cert,
        key: certificate.key,
        secretPath: pushed.secretPath,
        secretVersion: pushed.version ?? '',
      });
      secret = (await options.target.apply(manifest, { signal: options.signal })).outcome;
    }
    return { kind: 'refreshed', stored: pushed.outcome, version: pushed.version, secret, expiresAt };
  } catch (err) {
    const error = toPullSecretError(err);
    if (error.code === 'ABORTED') throw error;
    return { kind: 'failed', message: error.message, error };
  }
}
