/**
 * The AWS Secrets Manager store: the `SecretStore` contract over the calls in secrets-manager-api.ts,
 * with its writes in write-path.ts and its version lifecycle in version-stages.ts.
 */
import {
  DeleteSecretCommand,
  type DescribeSecretCommandOutput,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import type { STSClient } from '@aws-sdk/client-sts';
import { PullSecretError } from '../../errors/index.js';
import type {
  AccessLatestOptions,
  AddVersionOptions,
  CallOptions,
  CreatedSecret,
  CreateSecretOptions,
  SecretDescription,
  SecretMetadata,
  SecretPayload,
  SecretStore,
  SecretVersionInfo,
} from '../store.js';
import { awsCallExpecting } from './api-call.js';
import { AWS_PAYLOAD_LIMIT_BYTES, type AwsStoreConfig } from './config.js';
import { isMarkedForDeletion } from './errors.js';
import { assertAwsVersionId } from './names.js';
import { CURRENT, SecretsManagerApi } from './secrets-manager-api.js';
import { retireAwsVersion, restoreAwsVersion } from './version-stages.js';
import { addAwsVersion, createAwsSecret } from './write-path.js';

/** Days a deleted secret stays recoverable (AWS's minimum; its default is 30). */
export const RECOVERY_WINDOW_DAYS = 7;

/**
 * `SecretStore` on AWS Secrets Manager. Every method checks the secret name first
 * (IDENTIFIER_INVALID, no call made), takes the caller's signal, and throws only `PullSecretError`.
 *
 * State mapping (Secrets Manager has staging labels, not version states): the version labelled
 * AWSCURRENT is the newest ENABLED one and comes first in `describe`; the others follow newest
 * first. A version with any staging label (AWSCURRENT, AWSPREVIOUS, AWSPENDING, a custom one) is
 * ENABLED; one with none is "deprecated" (AWS deletes such versions once a secret has more than 100)
 * and is reported DISABLED: `accessVersion` refuses it (VERSION_NOT_ENABLED). A secret scheduled for
 * deletion counts as deleted: reads do not find it, and `createSecret` restores it when it is ours.
 *
 * Version lifecycle (retention, docs/retention.md): `disableVersion` removes AWSPREVIOUS,
 * `enableVersion` gives it back; there is no `destroyVersion` (AWS has no per-version delete and
 * removes deprecated versions itself).
 *
 * Account safety: before its first write a client asks STS whose credentials these are
 * (GetCallerIdentity, no permission needed; account-check.ts): another account's are refused
 * (CONFIG_INVALID) with nothing written anywhere. Every ARN an answer carries is checked against the
 * configured account and region too (a read in the wrong region, or with other credentials, is refused).
 *
 * ARNs: AWS appends `-` and 6 random characters to a secret's ARN. `secretPath` (for logs, before any
 * call) is the ARN without them; every answer's real ARN is what metadata, payloads and versions
 * carry (`SecretPayload.secretPath`), so status and the result file name the secret's real ARN.
 */
export class AwsSecretStore implements SecretStore {
  readonly kind = 'aws';
  readonly maxPayloadBytes = AWS_PAYLOAD_LIMIT_BYTES;
  readonly location: string;
  private readonly api: SecretsManagerApi;

  constructor(client: SecretsManagerClient, config: AwsStoreConfig, sts: STSClient) {
    this.api = new SecretsManagerApi(client, config, sts);
    this.location = this.api.location;
  }

  /** The secret's ARN without AWS's random suffix (`arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME`). */
  secretPath(secretId: string): string {
    return this.api.secretPath(secretId);
  }

  /** DescribeSecret; `undefined` when it does not exist or is scheduled for deletion. */
  async getSecret(secretId: string, options?: CallOptions): Promise<SecretMetadata | undefined> {
    const described = await this.api.describeRaw(secretId, options);
    return described === undefined || described.DeletedDate !== undefined
      ? undefined
      : this.api.toMetadata(secretId, described);
  }

  /**
   * CreateSecret with `labels` as tags and the configured KMS key; with `options.payload`, holding it
   * as the first version (AWSCURRENT, its `ClientRequestToken` derived from the content: names.ts),
   * one write. `undefined` when it exists already (a concurrent creator won; nothing is written to
   * it), or when it was scheduled for deletion and was ours for this cluster: then it is restored
   * (RestoreSecret) with its versions, and the caller reads it.
   *
   * @throws IDENTIFIER_INVALID, PAYLOAD_TOO_LARGE (no call made); SECRET_UNMANAGED for a secret
   *   scheduled for deletion that is not managed by HyperFleet for the same cluster (it is left alone).
   */
  createSecret(
    secretId: string,
    labels: Record<string, string>,
    options?: CreateSecretOptions,
  ): Promise<CreatedSecret | undefined> {
    return createAwsSecret(this.api, secretId, labels, options);
  }

  /**
   * GetSecretValue of AWSCURRENT: one call. ResourceNotFoundException means "no secret" or "no
   * version yet"; one DescribeSecret tells them apart unless `skipExistenceCheck` spares it.
   * @throws SECRET_NOT_FOUND when the secret does not exist or is scheduled for deletion.
   */
  async accessLatestEnabled(
    secretId: string,
    options?: AccessLatestOptions,
  ): Promise<SecretPayload | undefined> {
    const path = this.api.checkedPath(secretId);
    const result = await this.api.getValue(secretId, path, { VersionStage: CURRENT }, options);
    if (result.ok) return this.api.toPayload(path, result.value);
    if (result.code === 'InvalidRequestException') throw this.api.notFound(path, 'is scheduled for deletion');
    if (options?.skipExistenceCheck === true)
      throw this.api.notFound(path, 'does not exist or has no version yet');
    if ((await this.getSecret(secretId, options)) === undefined)
      throw this.api.notFound(path, 'does not exist');
    return undefined;
  }

  /**
   * GetSecretValue of one version id.
   * @throws SECRET_NOT_FOUND; VERSION_NOT_ENABLED for a version without staging label.
   */
  async accessVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretPayload> {
    const path = this.api.checkedPath(secretId);
    assertAwsVersionId(version);
    const result = await this.api.getValue(secretId, path, { VersionId: version }, options);
    if (!result.ok)
      throw this.api.notFound(
        path,
        result.code === 'InvalidRequestException' ? 'is scheduled for deletion' : `has no version ${version}`,
      );
    if ((result.value.VersionStages ?? []).length === 0) {
      throw new PullSecretError(
        'VERSION_NOT_ENABLED',
        `AWS Secrets Manager version ${this.api.versionPath(path, version)} carries no staging label ` +
          '(deprecated); it is not a version in use',
      );
    }
    return this.api.toPayload(path, result.value);
  }

  /**
   * Adds a version holding exactly `data` (SecretString when the bytes are UTF-8 text, else
   * SecretBinary), its `ClientRequestToken` derived from the content and `ifLatest` (names.ts).
   *
   * With `ifLatest` (what push passes) it is a compare-and-swap held by AWS itself: PutSecretValue
   * labels the new version AWSPENDING only, then UpdateSecretVersionStage moves AWSCURRENT to it
   * with `RemoveFromVersionId: ifLatest`, which AWS refuses when AWSCURRENT is no longer on
   * `ifLatest` (or, for `null`, is on any version). Concurrent writers of different content on the
   * same base: exactly one moves AWSCURRENT, the others get STORE_PRECONDITION_FAILED. Writers of
   * the same content on the same base share the token: one version. AWS moves AWSPREVIOUS to the
   * replaced version, so the previous value stays readable. Moving AWSCURRENT leaves AWSPENDING where
   * it is (it is a label of its own), so a third write removes it from the new version: no AWSPENDING
   * stays behind, which tools (and RotateSecret) read as "a rotation is in progress". A refused swap
   * removes it too; the version is then unlabelled, never current (AWS removes unlabelled versions).
   * Three writes (within the 50/s write quota).
   *
   * Without `ifLatest` it is one PutSecretValue that makes the version current unconditionally,
   * with a random token (a retry may then add a second version: callers that need idempotence
   * pass `ifLatest`).
   *
   * @throws PAYLOAD_TOO_LARGE (before any call), SECRET_NOT_FOUND, STORE_PRECONDITION_FAILED.
   */
  addVersion(secretId: string, data: Buffer, options?: AddVersionOptions): Promise<SecretVersionInfo> {
    return addAwsVersion(this.api, secretId, data, options);
  }

  /** DescribeSecret plus every ListSecretVersionIds page; AWSCURRENT first, then newest first. */
  async describe(secretId: string, options?: CallOptions): Promise<SecretDescription | undefined> {
    const metadata = await this.getSecret(secretId, options);
    if (metadata === undefined) return undefined;
    const listed = await this.api.listVersions(secretId, metadata.path, options);
    if (listed === undefined) return undefined;
    const versions = listed.map((v) => ({
      ...this.api.toVersionInfo(metadata.path, v),
      current: v.stages.includes(CURRENT),
    }));
    versions.sort(
      (a, b) => Number(b.current) - Number(a.current) || b.createdTime.localeCompare(a.createdTime),
    );
    return { ...metadata, versions: versions.map(({ current: _current, ...v }) => v) };
  }

  /**
   * Retires a superseded version: removes AWSPREVIOUS from it (UpdateSecretVersionStage with
   * `RemoveFromVersionId`), so it is no longer served. With no staging label left it is
   * "deprecated" (DISABLED here; AWS removes such versions itself once a secret has more than
   * 100, so there is no per-version destroy). Calls: ListSecretVersionIds (a page of 100), then
   * one write when AWSPREVIOUS is on it; none when it has no label (a no-op, DISABLED).
   *
   * Labels that are not ours to remove (AWSPENDING of a rotation or an unfinished swap, a custom
   * label someone added) are left alone: the version is returned ENABLED, still served, and the
   * caller reports it as kept.
   *
   * @throws SECRET_NOT_FOUND (secret or version), STORE_INVALID_REQUEST for the AWSCURRENT version.
   */
  disableVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretVersionInfo> {
    return retireAwsVersion(this.api, secretId, version, options);
  }

  /**
   * Gives a deprecated version AWSPREVIOUS back (UpdateSecretVersionStage: `MoveToVersionId` it,
   * `RemoveFromVersionId` the version holding AWSPREVIOUS now, which loses it), so it is served
   * again: what a rollback to a retired version does for its read. A version with any staging
   * label is ENABLED already (no write).
   * @throws SECRET_NOT_FOUND (secret or version), STORE_CONFLICT when AWSPREVIOUS moved meanwhile (retried).
   */
  enableVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretVersionInfo> {
    return restoreAwsVersion(this.api, secretId, version, options);
  }

  /**
   * DeleteSecret with a recovery window of 7 days (not a forced delete): an operator can still
   * restore a secret deleted by mistake, and a push for the same name restores it when it is ours.
   * False when it does not exist or is already scheduled for deletion.
   */
  async deleteSecret(secretId: string, options?: CallOptions): Promise<boolean> {
    const path = this.api.checkedPath(secretId);
    await this.api.account.assert(this.api.callOptions(options));
    const result = await awsCallExpecting(
      this.api.target('DeleteSecret', path),
      this.api.callOptions(options),
      ['ResourceNotFoundException', 'InvalidRequestException'],
      (abortSignal) =>
        this.api.client.send(
          new DeleteSecretCommand({ SecretId: secretId, RecoveryWindowInDays: RECOVERY_WINDOW_DAYS }),
          { abortSignal },
        ),
    );
    if (result.ok) {
      this.api.checkArn(result.value.ARN, 'DeleteSecret');
      return true;
    }
    if (result.code === 'ResourceNotFoundException' || isMarkedForDeletion(result.error)) return false;
    throw this.api.classified(result.error, 'DeleteSecret', path);
  }

  /** Releases the SDK's sockets. Safe to call twice. */
  async close(): Promise<void> {
    if (this.api.closed) return;
    this.api.closed = true;
    this.api.client.destroy();
    this.api.account.close();
    return Promise.resolve();
  }

  /** DescribeSecret as AWS answers it (deleted-pending included); `undefined` on ResourceNotFoundException. */
  describeRaw(secretId: string, options?: CallOptions): Promise<DescribeSecretCommandOutput | undefined> {
    return this.api.describeRaw(secretId, options);
  }
}
