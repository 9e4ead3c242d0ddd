import { createHash } from 'node:crypto';
import { PullSecretError } from '../../errors/index.js';
import { describeHidden } from '../../pullsecret/identifiers.js';
import { fingerprint } from '../../pullsecret/canonical.js';

/** Secrets Manager secret names: 1-512 of letters, digits and `/_+=.@-`. */
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
/** Version ids are the `ClientRequestToken` they were written with: 32-64 characters. */
const VERSION_ID = /^[A-Za-z0-9-]{32,64}$/;
/** Tag keys and values: letters, digits, spaces and `_.:/=+-@`; `aws:` keys are AWS's own. */
const TAG_TEXT = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;
/** Most tags one secret may carry. */
const MAX_TAGS = 50;

/**
 * Checks a secret name against Secrets Manager's rule up front (never rewritten to fit).
 * @throws IDENTIFIER_INVALID naming the rule, never echoing the value.
 */
export function assertAwsSecretName(name: string): void {
  if (!SECRET_NAME.test(name)) {
    throw new PullSecretError(
      'IDENTIFIER_INVALID',
      `invalid secret name (${name === '' ? 'empty' : describeHidden(name)}): AWS Secrets Manager names ` +
        `are 1-512 letters, digits or "/_+=.@-"`,
    );
  }
}

/** @throws IDENTIFIER_INVALID unless `version` has the form of a Secrets Manager version id. */
export function assertAwsVersionId(version: string): void {
  if (!VERSION_ID.test(version))
    throw new PullSecretError(
      'IDENTIFIER_INVALID',
      'invalid secret version: AWS Secrets Manager version ids are 32-64 letters, digits or "-"',
    );
}

/**
 * Checks labels against AWS's tag rules (at most 50; keys 1-128 and values at most 256 characters
 * of letters, digits, spaces and `_.:/=+-@`; no `aws:` prefix). The project's own label rule
 * (`assertLabels`, lowercase) is stricter and is checked too by the store.
 * @throws IDENTIFIER_INVALID naming the rule.
 */
export function assertAwsTags(labels: Readonly<Record<string, string>>): void {
  const entries = Object.entries(labels);
  if (entries.length > MAX_TAGS)
    throw new PullSecretError(
      'IDENTIFIER_INVALID',
      `too many labels (${entries.length}): an AWS secret carries at most ${MAX_TAGS} tags`,
    );
  for (const [key, value] of entries) {
    if (key.length < 1 || key.length > 128 || !TAG_TEXT.test(key) || key.toLowerCase().startsWith('aws:')) {
      throw new PullSecretError(
        'IDENTIFIER_INVALID',
        `invalid tag key (${describeHidden(key)}): 1-128 letters, digits, spaces or "_.:/=+-@", not ` +
          `starting with "aws:"`,
      );
    }
    if (value.length > 256 || !TAG_TEXT.test(value))
      throw new PullSecretError(
        'IDENTIFIER_INVALID',
        `invalid tag value (${describeHidden(value)}): at most 256 letters, digits, spaces or "_.:/=+-@"`,
      );
  }
}

/**
 * The `ClientRequestToken` of a version add: a UUID-formatted prefix of SHA-256 over the canonical
 * content's fingerprint and the version it replaces (`none` when there is none). A retried or
 * concurrent write of the same content on the same base therefore reuses the token, and Secrets
 * Manager makes no second version; the same content on another base (A→B→A) gets a new token and
 * a new version, so AWSCURRENT does move back to A. `exactBytes` derives it from the bytes instead:
 * the fallback when a version with the canonical token already holds the content in other formatting.
 */
export function versionToken(data: Uint8Array, replaces: string | null, exactBytes = false): string {
  const content = exactBytes ? `bytes ${createHash('sha256').update(data).digest('hex')}` : fingerprint(data);
  const hex = createHash('sha256')
    .update(`hyperfleet-pull-secret\n${content}\n${replaces ?? 'none'}`)
    .digest('hex');
  // RFC 9562 layout with version 8 (custom) and the RFC variant bits.
  const variant = ((parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
