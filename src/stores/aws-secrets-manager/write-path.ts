/**
 * The AWS store's writes of a secret and its versions: CreateSecret (restoring our own secret
 * scheduled for deletion), and the compare-and-swap of AWSCURRENT that adds a version.
 */
import { randomUUID } from 'node:crypto';
import {
  CreateSecretCommand,
  PutSecretValueCommand,
  RestoreSecretCommand,
  type Tag,
} from '@aws-sdk/client-secrets-manager';
import { PullSecretError } from '../../errors/index.js';
import { assertLabels, isManaged } from '../../pullsecret/identifiers.js';
import type {
  AddVersionOptions,
  CallOptions,
  CreatedSecret,
  CreateSecretOptions,
  SecretVersionInfo,
} from '../store.js';
import { awsCall, awsCallExpecting } from './api-call.js';
import { isMarkedForDeletion } from './errors.js';
import { assertAwsTags, versionToken } from './names.js';
import { CURRENT, PENDING, toLabels, type SecretsManagerApi } from './secrets-manager-api.js';

/** `AwsSecretStore.createSecret` (its TSDoc says the contract). */
export async function createAwsSecret(
  api: SecretsManagerApi,
  secretId: string,
  labels: Record<string, string>,
  options?: CreateSecretOptions,
): Promise<CreatedSecret | undefined> {
  const path = api.checkedPath(secretId);
  assertLabels(labels);
  assertAwsTags(labels);
  const data = options?.payload;
  const token = data === undefined ? undefined : versionToken(data, null);
  const Tags: Tag[] = Object.entries(labels).map(([Key, Value]) => ({ Key, Value }));
  const input = {
    Name: secretId,
    Tags,
    ...(api.config.kmsKeyId === undefined ? {} : { KmsKeyId: api.config.kmsKeyId }),
    ...(data === undefined ? {} : { ...api.secretValue(data), ClientRequestToken: token }),
  };
  await api.account.assert(api.callOptions(options));
  const result = await awsCallExpecting(
    api.target('CreateSecret', path),
    api.callOptions(options),
    ['ResourceExistsException', 'InvalidRequestException'],
    (abortSignal) => api.client.send(new CreateSecretCommand(input), { abortSignal }),
  );
  if (result.ok) {
    api.checkArn(result.value.ARN, 'CreateSecret');
    const arn = result.value.ARN ?? path;
    const metadata = {
      name: secretId,
      path: arn,
      labels: { ...labels },
      createdTime: new Date().toISOString(),
    };
    if (token === undefined) return metadata;
    return {
      ...metadata,
      version: {
        version: token,
        path: api.versionPath(arn, token),
        state: 'ENABLED',
        createdTime: metadata.createdTime,
      },
    };
  }
  if (result.code === 'ResourceExistsException') return undefined;
  if (!isMarkedForDeletion(result.error)) throw api.classified(result.error, 'CreateSecret', path);
  await restoreIfOurs(api, secretId, labels, options);
  return undefined;
}

/** Restores a secret scheduled for deletion when it is ours for the same cluster; refuses anyone else's. */
async function restoreIfOurs(
  api: SecretsManagerApi,
  secretId: string,
  labels: Readonly<Record<string, string>>,
  options: CallOptions | undefined,
): Promise<void> {
  const path = api.secretPath(secretId);
  const described = await api.describeRaw(secretId, options);
  if (described?.DeletedDate === undefined) return; // Restored or purged meanwhile: the caller reads it again.
  const tags = toLabels(described.Tags);
  if (
    !isManaged(tags) ||
    (labels['cluster-id'] !== undefined && tags['cluster-id'] !== labels['cluster-id'])
  ) {
    throw new PullSecretError(
      'SECRET_UNMANAGED',
      `secret ${path} is scheduled for deletion and is not managed by HyperFleet for this cluster; ` +
        'refusing to restore it: restore or delete it in AWS, or set another secret name',
    );
  }
  await awsCall(api.target('RestoreSecret', path), api.callOptions(options), (abortSignal) =>
    api.client.send(new RestoreSecretCommand({ SecretId: secretId }), { abortSignal }),
  );
}

/** `AwsSecretStore.addVersion` (its TSDoc says the contract). */
export async function addAwsVersion(
  api: SecretsManagerApi,
  secretId: string,
  data: Buffer,
  options?: AddVersionOptions,
): Promise<SecretVersionInfo> {
  const path = api.checkedPath(secretId);
  const value = api.secretValue(data);
  const conditional = options?.ifLatest !== undefined;
  const ifLatest = options?.ifLatest ?? null;
  let token = conditional ? versionToken(data, ifLatest) : randomUUID();
  const putWith = (ClientRequestToken: string) =>
    awsCallExpecting(
      api.target('PutSecretValue', path),
      api.callOptions(options),
      ['ResourceNotFoundException', 'ResourceExistsException', 'InvalidRequestException'],
      (abortSignal) =>
        api.client.send(
          new PutSecretValueCommand({
            SecretId: secretId,
            ClientRequestToken,
            ...value,
            ...(conditional ? { VersionStages: [PENDING] } : {}),
          }),
          { abortSignal },
        ),
    );
  await api.account.assert(api.callOptions(options));
  let put = await putWith(token);
  if (!put.ok && put.code === 'ResourceExistsException' && conditional) {
    // A version with this token holds the same content in other formatting (a concurrent writer, or one
    // made current again by hand): this add gets a token of its exact bytes instead, and the swap decides.
    token = versionToken(data, ifLatest, true);
    put = await putWith(token);
  }
  if (!put.ok) {
    if (put.code === 'ResourceExistsException')
      throw new PullSecretError(
        'STORE_CONFLICT',
        `AWS Secrets Manager secret ${path}: version ${token} exists with other bytes; re-reading`,
      );
    if (put.code === 'ResourceNotFoundException') throw api.notFound(path, 'does not exist');
    if (isMarkedForDeletion(put.error)) throw api.notFound(path, 'is scheduled for deletion');
    throw api.classified(put.error, 'PutSecretValue', path);
  }
  api.checkArn(put.value.ARN, 'PutSecretValue');
  const arn = put.value.ARN ?? path;
  const info: SecretVersionInfo = {
    version: token,
    path: api.versionPath(arn, token),
    state: 'ENABLED',
    createdTime: new Date().toISOString(),
  };
  if (!conditional) return info;
  const move = await api.sendStageMove(
    secretId,
    path,
    CURRENT,
    { MoveToVersionId: token, ...(ifLatest === null ? {} : { RemoveFromVersionId: ifLatest }) },
    options,
    ['InvalidParameterException'],
  );
  // Refused: AWSCURRENT is not where the caller saw it, unless an earlier attempt of this very add
  // already moved it.
  const swapped =
    move.ok ||
    (await api.describeRaw(secretId, options))?.VersionIdsToStages?.[token]?.includes(CURRENT) === true;
  await api.moveStage(secretId, path, PENDING, { RemoveFromVersionId: token }, options);
  if (swapped) return info;
  throw new PullSecretError(
    'STORE_PRECONDITION_FAILED',
    `AWS Secrets Manager secret ${path}: AWSCURRENT moved since it was read (a concurrent writer); re-reading`,
  );
}
