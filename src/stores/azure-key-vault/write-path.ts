/**
 * The Azure store's writes: the first version of a secret (recovering our own soft-deleted secret)
 * and each new version, serialized per secret within this process (secret-mutex.ts).
 */
import { PullSecretError } from '../../errors/index.js';
import { assertLabels, isManaged } from '../../pullsecret/identifiers.js';
import type {
  AddVersionOptions,
  CallOptions,
  CreatedSecret,
  CreateSecretOptions,
  SecretVersionInfo,
} from '../store.js';
import { call, callExpecting } from './api-call.js';
import type { KeyVaultApi } from './key-vault-api.js';
import {
  assertTags,
  PLACEHOLDER_CONTENT_TYPE,
  PLACEHOLDER_VALUE,
  PULL_SECRET_CONTENT_TYPE,
  toVersionInfo,
} from './resources.js';
import { serialized } from './secret-mutex.js';

/** `AzureSecretStore.createSecret` (its TSDoc says the contract). */
export async function createVaultSecret(
  api: KeyVaultApi,
  secretId: string,
  labels: Record<string, string>,
  options?: CreateSecretOptions,
): Promise<CreatedSecret | undefined> {
  const path = api.checkedPath(secretId);
  assertLabels(labels);
  assertTags(labels);
  const value = options?.payload === undefined ? undefined : api.vaultValue(options.payload);
  const set = await serialized(path, async () => {
    if ((await api.listVersions(secretId, options, 1)) !== undefined) return undefined;
    return callExpecting(api.target('SetSecret', path), api.callOptions(options), [409], (abortSignal) =>
      value === undefined
        ? api.client.setSecret(secretId, PLACEHOLDER_VALUE, {
            abortSignal,
            enabled: false,
            contentType: PLACEHOLDER_CONTENT_TYPE,
            tags: labels,
          })
        : api.client.setSecret(secretId, value, {
            abortSignal,
            enabled: true,
            contentType: PULL_SECRET_CONTENT_TYPE,
            tags: labels,
          }),
    );
  });
  if (set === undefined) return undefined;
  if (set.ok) {
    const metadata = api.metadata(secretId, set.value.properties);
    return value === undefined
      ? metadata
      : { ...metadata, version: toVersionInfo(path, set.value.properties) };
  }
  await recoverIfOurs(api, secretId, labels, options);
  return undefined;
}

/** `AzureSecretStore.addVersion` (its TSDoc says the contract). */
export async function addVaultVersion(
  api: KeyVaultApi,
  secretId: string,
  data: Buffer,
  options?: AddVersionOptions,
): Promise<SecretVersionInfo> {
  const path = api.checkedPath(secretId);
  const value = api.vaultValue(data);
  return serialized(path, async () => {
    const latest = await api.getLatest(secretId, options);
    if (latest === 'missing') throw api.notFound(path);
    let tags: Record<string, string>;
    let newestEnabled: string | null;
    if (latest === 'disabled') {
      const versions = await api.listVersions(secretId, options);
      if (versions === undefined || versions[0] === undefined) throw api.notFound(path);
      tags = { ...(versions[0].tags ?? {}) };
      newestEnabled = versions.find((v) => v.enabled !== false)?.version ?? null;
    } else {
      tags = { ...(latest.properties.tags ?? {}) };
      newestEnabled = latest.properties.version ?? null;
    }
    if (options?.ifLatest !== undefined && newestEnabled !== options.ifLatest) {
      throw new PullSecretError(
        'STORE_PRECONDITION_FAILED',
        `Azure Key Vault secret ${path}: its newest enabled version is now ${newestEnabled ?? 'none'}, ` +
          `not ${options.ifLatest ?? 'none'}; re-reading`,
      );
    }
    assertTags(tags);
    const set = await call(api.target('SetSecret', path), api.callOptions(options), (abortSignal) =>
      api.client.setSecret(secretId, value, {
        abortSignal,
        enabled: true,
        contentType: PULL_SECRET_CONTENT_TYPE,
        tags,
      }),
    );
    return toVersionInfo(path, set.properties);
  });
}

/**
 * After a 409 on the first SetSecret: the name is held by a soft-deleted secret. Ours is recovered
 * (and waited for); a foreign one is refused; one not listed yet is still being deleted.
 */
async function recoverIfOurs(
  api: KeyVaultApi,
  secretId: string,
  labels: Record<string, string>,
  options: CallOptions | undefined,
): Promise<void> {
  const path = api.secretPath(secretId);
  const deleted = await callExpecting(
    api.target('GetDeletedSecret', path),
    api.callOptions(options),
    [404],
    (abortSignal) => api.client.getDeletedSecret(secretId, { abortSignal }),
  );
  if (!deleted.ok) {
    throw new PullSecretError(
      'STORE_CONFLICT',
      `Azure Key Vault secret ${path} is being deleted and its name cannot be reused yet; retrying.`,
    );
  }
  const tags = deleted.value.properties.tags ?? {};
  const wanted = labels['cluster-id'];
  if (
    !isManaged(tags) ||
    (wanted !== undefined && tags['cluster-id'] !== undefined && tags['cluster-id'] !== wanted)
  ) {
    throw new PullSecretError(
      'SECRET_UNMANAGED',
      `secret ${path} is soft-deleted in the vault and is not managed by HyperFleet for this cluster; ` +
        'refusing to recover it: its owner must purge or recover it, or set SECRET_NAME to another name',
    );
  }
  await call(api.target('RecoverDeletedSecret', path), api.callOptions(options), async (abortSignal) => {
    const poller = await api.client.beginRecoverDeletedSecret(secretId, {
      abortSignal,
      intervalInMs: api.config.recoverPollMs,
    });
    return poller.pollUntilDone({ abortSignal });
  });
}
