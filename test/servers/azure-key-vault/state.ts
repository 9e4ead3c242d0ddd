import { randomBytes } from 'node:crypto';

/**
 * The data of one test vault, with Key Vault's rules for secrets: names, tags, value size,
 * versions with their own tags/content type/enabled flag, soft delete, recover and purge.
 */

/** Key Vault secret names. */
export const SECRET_NAME = /^[0-9a-zA-Z-]{1,127}$/;
/** Key Vault: at most 15 tags per version. */
export const MAX_TAGS = 15;
/** The service's value limit as this server enforces it ("25k bytes"; 25 KiB here, at the generous reading). */
export const MAX_VALUE_BYTES = 25 * 1024;

export interface StoredVersion {
  id: string;
  value: string;
  contentType?: string;
  enabled: boolean;
  tags?: Record<string, string>;
  /** Unix seconds, as Key Vault sends them. */
  created: number;
  updated: number;
}

export interface StoredSecret {
  name: string;
  /** Oldest first. */
  versions: StoredVersion[];
  /** Set while soft-deleted. */
  deleted?: { deletedDate: number; scheduledPurgeDate: number };
}

/** A rule broken by a request: answered with `status` and Key Vault's error body. */
export class VaultError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly innerCode?: string,
  ) {
    super(message);
  }
}

export class VaultState {
  readonly secrets = new Map<string, StoredSecret>();
  /**
   * Creation times in whole seconds as the service sends them, but never two writes in the same
   * second: a logical clock that moves at least one second per write, so "newest by created" is
   * a total order here (on the real service, versions set within one second tie).
   */
  private clock = Math.floor(Date.now() / 1000);

  private tick(): number {
    this.clock = Math.max(this.clock + 1, Math.floor(Date.now() / 1000));
    return this.clock;
  }

  /**
   * The live secret `name`, or a 404 as Key Vault answers it (a soft-deleted secret is not live): recordings
   * "can get a secret (non existing)", "can delete a secret (non existing)" in
   * https://github.com/Azure/azure-sdk-for-js/tree/main/sdk/keyvault/keyvault-secrets/recordings/browsers/secret_client__create_read_update_and_delete_operations
   */
  live(name: string): StoredSecret {
    const secret = this.liveOrUndefined(name);
    if (secret === undefined) {
      throw new VaultError(
        404,
        'SecretNotFound',
        `A secret with (name/id) ${name} was not found in this key vault. If you recently deleted this secret you may be able to recover it using the correct recovery command. For help resolving this issue, please see https://go.microsoft.com/fwlink/?linkid=2125182`,
      );
    }
    return secret;
  }

  /** The live secret `name`, or undefined when none is live (never set, or soft-deleted). */
  liveOrUndefined(name: string): StoredSecret | undefined {
    const secret = this.secrets.get(name);
    return secret === undefined || secret.deleted !== undefined || secret.versions.length === 0
      ? undefined
      : secret;
  }

  /**
   * One version, or the newest when `id` is empty; 403 Forbidden, inner code SecretDisabled, for a disabled one
   * (recording "cant get a disabled secret", same folder as `live`).
   */
  read(name: string, id: string): StoredVersion {
    const secret = this.live(name);
    const version = id === '' ? secret.versions.at(-1) : secret.versions.find((v) => v.id === id);
    if (version === undefined)
      throw new VaultError(
        404,
        'SecretNotFound',
        `A secret with (name/id) ${name}/${id} was not found in this key vault.`,
      );
    if (!version.enabled)
      throw new VaultError(
        403,
        'Forbidden',
        'Operation get is not allowed on a disabled secret.',
        'SecretDisabled',
      );
    return version;
  }

  /**
   * Sets a new version (creating the secret); 409 Conflict, inner code ObjectIsDeletedButRecoverable, while the
   * name is held by a soft-deleted secret (https://learn.microsoft.com/azure/key-vault/general/soft-delete-overview;
   * https://github.com/Azure/azure-sdk-for-net/blob/main/sdk/keyvault/Azure.Security.KeyVault.Secrets/samples/Sample4_ErrorResponse.md).
   */
  set(
    name: string,
    body: { value?: unknown; contentType?: unknown; tags?: unknown; attributes?: { enabled?: unknown } },
  ): StoredVersion {
    checkName(name);
    if (typeof body.value !== 'string')
      throw new VaultError(400, 'BadParameter', 'Property value is required.');
    if (Buffer.byteLength(body.value, 'utf8') > MAX_VALUE_BYTES)
      throw new VaultError(
        400,
        'BadParameter',
        `Secret value is too large: the maximum size is ${MAX_VALUE_BYTES} bytes.`,
      );
    const tags = checkTags(body.tags);
    const existing = this.secrets.get(name);
    if (existing?.deleted !== undefined) {
      throw new VaultError(
        409,
        'Conflict',
        `Secret ${name} is currently in a deleted but recoverable state, and its name cannot be reused; in this state, the secret can only be recovered or purged.`,
        'ObjectIsDeletedButRecoverable',
      );
    }
    const now = this.tick();
    const version: StoredVersion = {
      id: randomBytes(16).toString('hex'),
      value: body.value,
      enabled: body.attributes?.enabled !== false,
      created: now,
      updated: now,
      ...(typeof body.contentType === 'string' ? { contentType: body.contentType } : {}),
      ...(tags === undefined ? {} : { tags }),
    };
    const secret = existing ?? { name, versions: [] };
    secret.versions.push(version);
    this.secrets.set(name, secret);
    return version;
  }

  /** Updates a version's attributes, content type and tags (the value never changes). */
  update(
    name: string,
    id: string,
    body: { contentType?: unknown; tags?: unknown; attributes?: { enabled?: unknown } },
  ): StoredVersion {
    const secret = this.live(name);
    const version = id === '' ? secret.versions.at(-1) : secret.versions.find((v) => v.id === id);
    if (version === undefined)
      throw new VaultError(
        404,
        'SecretNotFound',
        `A secret with (name/id) ${name}/${id} was not found in this key vault.`,
      );
    const tags = checkTags(body.tags);
    if (typeof body.attributes?.enabled === 'boolean') version.enabled = body.attributes.enabled;
    if (typeof body.contentType === 'string') version.contentType = body.contentType;
    if (tags !== undefined) version.tags = tags;
    version.updated = this.tick();
    return version;
  }

  softDelete(name: string): StoredSecret {
    const secret = this.live(name);
    const now = this.tick();
    secret.deleted = { deletedDate: now, scheduledPurgeDate: now + 90 * 86_400 };
    return secret;
  }

  /** GetDeletedSecret: 404 "Deleted Secret not found" unless soft-deleted (recording "can get a deleted secret (non existing)"). */
  deleted(name: string): StoredSecret {
    const secret = this.secrets.get(name);
    if (secret?.deleted === undefined)
      throw new VaultError(404, 'SecretNotFound', `Deleted Secret not found: ${name}`);
    return secret;
  }

  recover(name: string): StoredSecret {
    const secret = this.deleted(name);
    delete secret.deleted;
    return secret;
  }

  purge(name: string): void {
    this.deleted(name);
    this.secrets.delete(name);
  }

  /** Test power: a secret created behind the store's back. */
  seed(
    name: string,
    versions: Array<{
      value: string;
      tags?: Record<string, string>;
      enabled?: boolean;
      contentType?: string;
    }>,
  ): StoredSecret {
    for (const v of versions)
      this.set(name, {
        value: v.value,
        tags: v.tags,
        contentType: v.contentType,
        attributes: { enabled: v.enabled ?? true },
      });
    return this.live(name);
  }
}

function checkName(name: string): void {
  if (!SECRET_NAME.test(name))
    throw new VaultError(
      400,
      'BadParameter',
      "The request URI contains an invalid name: secret names may contain only 0-9, a-z, A-Z and '-', 1-127 characters.",
    );
}

function checkTags(tags: unknown): Record<string, string> | undefined {
  if (tags === undefined || tags === null) return undefined;
  if (typeof tags !== 'object' || Array.isArray(tags))
    throw new VaultError(400, 'BadParameter', 'Tags must be an object of strings.');
  const entries = Object.entries(tags);
  if (entries.length > MAX_TAGS)
    throw new VaultError(400, 'BadParameter', `The number of tags exceeds the maximum of ${MAX_TAGS}.`);
  for (const [key, value] of entries) {
    if (typeof value !== 'string' || key.length > 512 || value.length > 256)
      throw new VaultError(
        400,
        'BadParameter',
        'Tag names hold at most 512 characters and values at most 256.',
      );
  }
  return Object.fromEntries(entries);
}
