import { fingerprint } from '../pullsecret/canonical.js';
import { isManaged } from '../pullsecret/identifiers.js';
import { ANNOTATIONS, DOCKERCONFIGJSON_KEY, type PullSecretManifest } from './pull-secret-manifest.js';
import type { SecretDescription } from './target.js';

/**
 * How a desired pull secret Secret is reconciled with one that exists (in a cluster or a manifest
 * file): the same rules for every target, so outcomes agree. Pure.
 */

/** The parts of an existing Secret the rules look at. */
export interface ExistingSecret {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  type?: string;
  data?: Record<string, string>;
}

/** Our keys with their merged values, ready to write back. */
interface MergedSecret {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  data: Record<string, string>;
}

/** True when the existing Secret carries `managed-by=hyperfleet`. */
export function isManagedSecret(existing: ExistingSecret): boolean {
  return isManaged(existing.metadata?.labels);
}

/**
 * What a target reports of an existing Secret: names, labels, annotations, data keys and a content hash, never data.
 */
export function describeSecret(existing: ExistingSecret, name: string, namespace: string): SecretDescription {
  const payload = existing.data?.[DOCKERCONFIGJSON_KEY];
  return {
    name,
    namespace,
    managed: isManagedSecret(existing),
    type: existing.type,
    labels: { ...(existing.metadata?.labels ?? {}) },
    annotations: { ...(existing.metadata?.annotations ?? {}) },
    dataKeys: Object.keys(existing.data ?? {}).sort(),
    contentSha256: payload === undefined ? undefined : fingerprint(Buffer.from(payload, 'base64')),
  };
}

/**
 * True when the existing content is ours and current: the content fingerprint annotation matches
 * AND the `.dockerconfigjson` bytes are identical (an annotation alone could be stale if someone
 * edited the data).
 */
export function contentMatches(existing: ExistingSecret, desired: PullSecretManifest): boolean {
  const fingerprint = existing.metadata?.annotations?.[ANNOTATIONS.contentSha256];
  if (fingerprint !== desired.metadata.annotations[ANNOTATIONS.contentSha256]) return false;
  // Every data key we own (`.dockerconfigjson`, or the entitlement's two PEMs) must hold our bytes.
  const keys = Object.keys(desired.data);
  return (
    keys.length > 0 &&
    keys.every((key) => {
      const have = existing.data?.[key];
      const want = desired.data[key];
      return (
        have !== undefined &&
        want !== undefined &&
        Buffer.from(have, 'base64').equals(Buffer.from(want, 'base64'))
      );
    })
  );
}

/**
 * True when nothing needs writing: content matches and every label and annotation we own already
 * has its desired value (`last-updated` aside: it records the last content change, not this call).
 */
export function isUpToDate(existing: ExistingSecret, desired: PullSecretManifest): boolean {
  return contentMatches(existing, desired) && ownedMetadataMatches(existing, desired);
}

/**
 * True when the type and every label and annotation we own (`last-updated` aside) have their desired
 * values; data is not looked at.
 */
export function ownedMetadataMatches(existing: ExistingSecret, desired: PullSecretManifest): boolean {
  if (existing.type !== desired.type) return false;
  const labels = existing.metadata?.labels ?? {};
  const annotations = existing.metadata?.annotations ?? {};
  return (
    Object.entries(desired.metadata.labels).every(([k, v]) => labels[k] === v) &&
    Object.entries(desired.metadata.annotations).every(
      ([k, v]) => k === ANNOTATIONS.lastUpdated || annotations[k] === v,
    )
  );
}

/**
 * Our keys laid over the existing ones: every label, annotation and data key someone else added is
 * kept. `last-updated` keeps its old value unless the content changes.
 */
export function mergeSecret(existing: ExistingSecret, desired: PullSecretManifest): MergedSecret {
  const oldAnnotations = existing.metadata?.annotations ?? {};
  const annotations = { ...oldAnnotations, ...desired.metadata.annotations };
  const previousUpdate = oldAnnotations[ANNOTATIONS.lastUpdated];
  if (contentMatches(existing, desired) && previousUpdate !== undefined)
    annotations[ANNOTATIONS.lastUpdated] = previousUpdate;
  return {
    labels: { ...(existing.metadata?.labels ?? {}), ...desired.metadata.labels },
    annotations,
    data: { ...(existing.data ?? {}), ...desired.data },
  };
}
