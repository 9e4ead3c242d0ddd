/**
 * The GCP store's version state changes for retention (docs/retention.md): disable, enable and
 * destroy of one numbered version, and the ListSecretVersions page the store reads versions from.
 */
import type { SecretManagerServiceClient, protos } from '@google-cloud/secret-manager';
import type { CallOptions as GaxCallOptions } from 'google-gax';
import { PullSecretError } from '../../errors/index.js';
import type { SecretVersionInfo } from '../store.js';
import { callExpecting, type ApiCallOptions } from './api-call.js';
import { toVersionInfo } from './resources.js';

type ISecretVersion = protos.google.cloud.secretmanager.v1.ISecretVersion;

/** The RPCs that change one version's state. */
export type VersionStateMethod = 'EnableSecretVersion' | 'DisableSecretVersion' | 'DestroySecretVersion';

/**
 * One version state change of version `version` of the secret `path`; FAILED_PRECONDITION (the
 * version is destroyed) becomes STORE_INVALID_REQUEST, like the local store.
 * @throws IDENTIFIER_INVALID (no call made) for a version that is not a positive number.
 */
export async function changeVersionState(
  client: SecretManagerServiceClient,
  method: VersionStateMethod,
  path: string,
  version: string,
  options: ApiCallOptions,
): Promise<SecretVersionInfo> {
  if (!/^[1-9][0-9]{0,18}$/.test(version))
    throw new PullSecretError(
      'IDENTIFIER_INVALID',
      'invalid secret version: must be a positive version number',
    );
  const name = `${path}/versions/${version}`;
  const request = { name };
  const run = async (o: GaxCallOptions): Promise<ISecretVersion> => {
    if (method === 'DisableSecretVersion') return (await client.disableSecretVersion(request, o))[0];
    if (method === 'EnableSecretVersion') return (await client.enableSecretVersion(request, o))[0];
    return (await client.destroySecretVersion(request, o))[0];
  };
  const result = await callExpecting({ method, resource: name }, options, ['FAILED_PRECONDITION'], run);
  if (!result.ok)
    throw new PullSecretError(
      'STORE_INVALID_REQUEST',
      `GCP Secret Manager ${method} refused for ${name}: the version is DESTROYED and cannot change state`,
    );
  return toVersionInfo(path, result.value);
}

/** One ListSecretVersions page of the secret `secretPath` (newest first); `missing` on NOT_FOUND. */
export async function listVersionsPage(
  client: SecretManagerServiceClient,
  secretPath: string,
  page: { pageSize: number; pageToken?: string | undefined; filter?: string },
  options: ApiCallOptions,
): Promise<{ versions: SecretVersionInfo[]; nextPageToken?: string; missing?: true }> {
  const request = { parent: secretPath, ...page };
  const result = await callExpecting(
    { method: 'ListSecretVersions', resource: secretPath },
    options,
    ['NOT_FOUND'],
    (o) => client.listSecretVersions(request, { ...o, autoPaginate: false }),
  );
  if (!result.ok) return { versions: [], missing: true };
  const [versions, , response] = result.value;
  const nextPageToken = response?.nextPageToken;
  return {
    versions: versions.map((v) => toVersionInfo(secretPath, v)),
    ...(nextPageToken ? { nextPageToken } : {}),
  };
}
