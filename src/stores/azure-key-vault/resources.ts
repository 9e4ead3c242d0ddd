import { describeHidden } from '../../pullsecret/identifiers.js';
import { PullSecretError } from '../../errors/index.js';
import type { SecretVersionInfo } from '../store.js';

/**
 * Key Vault's rules and the conversions from its resources to the store contract's types. A Key
 * Vault secret has no metadata of its own: tags, content type and the enabled flag belong to each
 * version, and the secret's are those of its newest version.
 */

/** Key Vault secret names: 1-127 letters, digits and "-". */
const SECRET_NAME = /^[0-9a-zA-Z-]{1,127}$/;
/** Key Vault version ids: 32 lowercase hex digits. */
const VERSION_ID = /^[0-9a-f]{32}$/;
/** Key Vault allows at most 15 tags per secret version; names up to 512 and values up to 256 characters. */
const MAX_TAGS = 15;
const MAX_TAG_NAME = 512;
const MAX_TAG_VALUE = 256;

/** Content type of every version holding a pull secret. */
export const PULL_SECRET_CONTENT_TYPE = 'application/json';
/**
 * Content type of the disabled placeholder version `createSecret` sets (Key Vault has no secret
 * without a version). It holds no secret, is never enabled, and `describe` does not list it.
 */
export const PLACEHOLDER_CONTENT_TYPE = 'application/vnd.hyperfleet.no-version-yet';
/** The placeholder's value: a fixed text, not a secret. */
export const PLACEHOLDER_VALUE = 'no version yet';

/** Validates a secret name against Key Vault's rule; never rewrites it. @throws IDENTIFIER_INVALID */
export function assertVaultSecretName(name: string): void {
  if (SECRET_NAME.test(name)) return;
  const refused = name.length === 0 ? 'empty' : describeHidden(name);
  throw new PullSecretError(
    'IDENTIFIER_INVALID',
    `invalid secret name (${refused}): Azure Key Vault secret names are 1-127 characters of letters, ` +
      `digits or "-" (set SECRET_NAME to one)`,
  );
}

/** Validates a version id before it goes into a URL. @throws IDENTIFIER_INVALID */
export function assertVersionId(version: string): void {
  if (!VERSION_ID.test(version))
    throw new PullSecretError(
      'IDENTIFIER_INVALID',
      'invalid secret version: Azure Key Vault version ids are 32 hexadecimal digits',
    );
}

/** Checks tags against Key Vault's limits before a write. @throws STORE_INVALID_REQUEST */
export function assertTags(tags: Readonly<Record<string, string>>): void {
  const entries = Object.entries(tags);
  if (entries.length > MAX_TAGS)
    throw new PullSecretError(
      'STORE_INVALID_REQUEST',
      `Azure Key Vault allows at most ${MAX_TAGS} tags per secret; this one would have ${entries.length}`,
    );
  for (const [key, value] of entries) {
    if (key.length === 0 || key.length > MAX_TAG_NAME || value.length > MAX_TAG_VALUE) {
      throw new PullSecretError(
        'STORE_INVALID_REQUEST',
        `Azure Key Vault tag names hold 1-${MAX_TAG_NAME} characters and values at most ${MAX_TAG_VALUE}`,
      );
    }
  }
}

/**
 * The value Key Vault will store for `data`: Key Vault holds text, so the bytes must be valid UTF-8
 * that round-trips exactly. @throws PULL_SECRET_INVALID
 */
export function toVaultValue(data: Buffer): string {
  const text = data.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(data))
    throw new PullSecretError(
      'PULL_SECRET_INVALID',
      'the pull secret is not valid UTF-8 text, which Azure Key Vault requires',
    );
  return text;
}

/** What the store needs of one version's properties (the SDK's `SecretProperties`). */
export interface VersionProperties {
  version?: string | undefined;
  enabled?: boolean | undefined;
  contentType?: string | undefined;
  tags?: Record<string, string> | undefined;
  createdOn?: Date | undefined;
}

export function isPlaceholder(properties: VersionProperties): boolean {
  return properties.contentType === PLACEHOLDER_CONTENT_TYPE;
}

/** Newest first by creation time (Key Vault lists versions in no documented order). */
export function newestFirst<T extends VersionProperties>(versions: readonly T[]): T[] {
  return [...versions].sort((a, b) => (b.createdOn?.getTime() ?? 0) - (a.createdOn?.getTime() ?? 0));
}

/** Store info of one version; `secretUrl` is the secret's URL. */
export function toVersionInfo(secretUrl: string, properties: VersionProperties): SecretVersionInfo {
  const version = properties.version ?? '';
  return {
    version,
    path: `${secretUrl}/${version}`,
    state: properties.enabled === false ? 'DISABLED' : 'ENABLED',
    createdTime: (properties.createdOn ?? new Date(0)).toISOString(),
  };
}
