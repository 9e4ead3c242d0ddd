import { randomUUID } from 'node:crypto';
import {
  CreateSecretCommand,
  DeleteSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  ListSecretVersionIdsCommand,
  PutSecretValueCommand,
  RestoreSecretCommand,
  UpdateSecretVersionStageCommand,
  type DescribeSecretCommandOutput,
  type GetSecretValueCommandOutput,
  type SecretsManagerClient,
  type Tag,
} from '@aws-sdk/client-secrets-manager';
import type { STSClient } from '@aws-sdk/client-sts';
import { PullSecretError } from '../../errors/index.js';
import { assertLabels, isManaged } from '../../pullsecret/identifiers.js';
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
import { AccountCheck } from './account-check.js';
import { awsCall, awsCallExpecting, type AwsApiCallOptions } from './api-call.js';
import { AWS_PAYLOAD_LIMIT_BYTES, awsLocation, type AwsStoreConfig } from './config.js';
import { classifyAwsError, isMarkedForDeletion, type AwsMethod } from './errors.js';
import { assertAwsSecretName, assertAwsTags, assertAwsVersionId, versionToken } from './names.js';

/** The staging label of the current version. */
const CURRENT = 'AWSCURRENT';
/** The label a new version carries until the compare-and-swap of AWSCURRENT makes it current. */
const PENDING = 'AWSPENDING';
/** The label AWS moves to the version AWSCURRENT leaves: the overlap of the previous value. */
const PREVIOUS = 'AWSPREVIOUS';
/** Days a deleted secret stays recoverable (AWS's minimum; its default is 30). */
export const RECOVERY_WINDOW_DAYS = 7;
/** Versions asked for per ListSecretVersionIds page by `describe`. */
const PAGE_SIZE = 100;

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
  private closed = false;
  private readonly account: AccountCheck;

  constructor(
    private readonly client: SecretsManagerClient,
    private readonly config: AwsStoreConfig,
    sts: STSClient,
  ) {
    this.location = awsLocation(config.accountId, config.region);
    this.account = new AccountCheck(sts, config.accountId);
  }

  /** The secret's ARN without AWS's random suffix (`arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME`). */
  secretPath(secretId: string): string {
    return `${this.location}:secret:${secretId}`;
  }

  /** DescribeSecret; `undefined` when it does not exist or is scheduled for deletion. */
  async getSecret(secretId: string, options?: CallOptions): Promise<SecretMetadata | undefined> {
    const described = await this.describeRaw(secretId, options);
    return described === undefined || described.DeletedDate !== undefined
      ? undefined
      : this.toMetadata(secretId, described);
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
  async createSecret(
    secretId: string,
    labels: Record<string, string>,
    options?: CreateSecretOptions,
  ): Promise<CreatedSecret | undefined> {
    const path = this.checkedPath(secretId);
    assertLabels(labels);
    assertAwsTags(labels);
    const data = options?.payload;
    const token = data === undefined ? undefined : versionToken(data, null);
    const Tags: Tag[] = Object.entries(labels).map(([Key, Value]) => ({ Key, Value }));
    const input = {
      Name: secretId,
      Tags,
      ...(this.config.kmsKeyId === undefined ? {} : { KmsKeyId: this.config.kmsKeyId }),
      ...(data === undefined ? {} : { ...this.secretValue(data), ClientRequestToken: token }),
    };
    await this.account.assert(this.callOptions(options));
    const result = await awsCallExpecting(
      this.target('CreateSecret', path),
      this.callOptions(options),
      ['ResourceExistsException', 'InvalidRequestException'],
      (abortSignal) => this.client.send(new CreateSecretCommand(input), { abortSignal }),
    );
    if (result.ok) {
      this.checkArn(result.value.ARN, 'CreateSecret');
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
          path: this.versionPath(arn, token),
          state: 'ENABLED',
          createdTime: metadata.createdTime,
        },
      };
    }
    if (result.code === 'ResourceExistsException') return undefined;
    if (!isMarkedForDeletion(result.error)) throw this.classified(result.error, 'CreateSecret', path);
    await this.restoreIfOurs(secretId, labels, options);
    return undefined;
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
    const path = this.checkedPath(secretId);
    const result = await this.getValue(secretId, path, { VersionStage: CURRENT }, options);
    if (result.ok) return this.toPayload(path, result.value);
    if (result.code === 'InvalidRequestException') throw this.notFound(path, 'is scheduled for deletion');
    if (options?.skipExistenceCheck === true)
      throw this.notFound(path, 'does not exist or has no version yet');
    if ((await this.getSecret(secretId, options)) === undefined) throw this.notFound(path, 'does not exist');
    return undefined;
  }

  /** GetSecretValue of one version id. @throws SECRET_NOT_FOUND; VERSION_NOT_ENABLED for a version without staging label. */
  async accessVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretPayload> {
    const path = this.checkedPath(secretId);
    assertAwsVersionId(version);
    const result = await this.getValue(secretId, path, { VersionId: version }, options);
    if (!result.ok)
      throw this.notFound(
        path,
        result.code === 'InvalidRequestException' ? 'is scheduled for deletion' : `has no version ${version}`,
      );
    if ((result.value.VersionStages ?? []).length === 0) {
      throw new PullSecretError(
        'VERSION_NOT_ENABLED',
        `AWS Secrets Manager version ${this.versionPath(path, version)} carries no staging label (deprecated); it is not a version in use`,
      );
    }
    return this.toPayload(path, result.value);
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
  async addVersion(secretId: string, data: Buffer, options?: AddVersionOptions): Promise<SecretVersionInfo> {
    const path = this.checkedPath(secretId);
    const value = this.secretValue(data);
    const conditional = options?.ifLatest !== undefined;
    const ifLatest = options?.ifLatest ?? null;
    let token = conditional ? versionToken(data, ifLatest) : randomUUID();
    const putWith = (ClientRequestToken: string) =>
      awsCallExpecting(
        this.target('PutSecretValue', path),
        this.callOptions(options),
        ['ResourceNotFoundException', 'ResourceExistsException', 'InvalidRequestException'],
        (abortSignal) =>
          this.client.send(
            new PutSecretValueCommand({
              SecretId: secretId,
              ClientRequestToken,
              ...value,
              ...(conditional ? { VersionStages: [PENDING] } : {}),
            }),
            { abortSignal },
          ),
      );
    await this.account.assert(this.callOptions(options));
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
      if (put.code === 'ResourceNotFoundException') throw this.notFound(path, 'does not exist');
      if (isMarkedForDeletion(put.error)) throw this.notFound(path, 'is scheduled for deletion');
      throw this.classified(put.error, 'PutSecretValue', path);
    }
    this.checkArn(put.value.ARN, 'PutSecretValue');
    const arn = put.value.ARN ?? path;
    const info: SecretVersionInfo = {
      version: token,
      path: this.versionPath(arn, token),
      state: 'ENABLED',
      createdTime: new Date().toISOString(),
    };
    if (!conditional) return info;
    const move = await awsCallExpecting(
      this.target('UpdateSecretVersionStage', path),
      this.callOptions(options),
      ['InvalidParameterException'],
      (abortSignal) =>
        this.client.send(
          new UpdateSecretVersionStageCommand({
            SecretId: secretId,
            VersionStage: CURRENT,
            MoveToVersionId: token,
            ...(ifLatest === null ? {} : { RemoveFromVersionId: ifLatest }),
          }),
          {
            abortSignal,
          },
        ),
    );
    // Refused: AWSCURRENT is not where the caller saw it, unless an earlier attempt of this very add already moved it.
    const swapped =
      move.ok ||
      (await this.describeRaw(secretId, options))?.VersionIdsToStages?.[token]?.includes(CURRENT) === true;
    await this.moveStage(secretId, path, PENDING, { RemoveFromVersionId: token }, options);
    if (swapped) return info;
    throw new PullSecretError(
      'STORE_PRECONDITION_FAILED',
      `AWS Secrets Manager secret ${path}: AWSCURRENT moved since it was read (a concurrent writer); re-reading`,
    );
  }

  /** DescribeSecret plus every ListSecretVersionIds page; AWSCURRENT first, then newest first. */
  async describe(secretId: string, options?: CallOptions): Promise<SecretDescription | undefined> {
    const metadata = await this.getSecret(secretId, options);
    if (metadata === undefined) return undefined;
    const listed = await this.listVersions(secretId, metadata.path, options);
    if (listed === undefined) return undefined;
    const versions = listed.map((v) => ({
      ...this.toVersionInfo(metadata.path, v),
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
  async disableVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretVersionInfo> {
    const path = this.checkedPath(secretId);
    assertAwsVersionId(version);
    const { found } = await this.findVersion(secretId, path, version, options);
    if (found.stages.includes(CURRENT)) {
      throw new PullSecretError(
        'STORE_INVALID_REQUEST',
        `AWS Secrets Manager version ${this.versionPath(path, version)} is AWSCURRENT, the version in use; refusing to retire it (make another version current first)`,
      );
    }
    if (!found.stages.includes(PREVIOUS)) return this.toVersionInfo(path, found);
    const moved = await this.moveStage(secretId, path, PREVIOUS, { RemoveFromVersionId: version }, options);
    // Refused: AWSPREVIOUS moved meanwhile (a concurrent push moved AWSCURRENT): read where the version stands now.
    if (!moved)
      return this.toVersionInfo(path, (await this.findVersion(secretId, path, version, options)).found);
    return this.toVersionInfo(path, { ...found, stages: found.stages.filter((s) => s !== PREVIOUS) });
  }

  /**
   * Gives a deprecated version AWSPREVIOUS back (UpdateSecretVersionStage: `MoveToVersionId` it,
   * `RemoveFromVersionId` the version holding AWSPREVIOUS now, which loses it), so it is served
   * again: what a rollback to a retired version does for its read. A version with any staging
   * label is ENABLED already (no write).
   * @throws SECRET_NOT_FOUND (secret or version), STORE_CONFLICT when AWSPREVIOUS moved meanwhile (retried).
   */
  async enableVersion(secretId: string, version: string, options?: CallOptions): Promise<SecretVersionInfo> {
    const path = this.checkedPath(secretId);
    assertAwsVersionId(version);
    const { found, listed } = await this.findVersion(secretId, path, version, options);
    if (found.stages.length > 0) return this.toVersionInfo(path, found);
    const holder = listed.find((v) => v.stages.includes(PREVIOUS));
    const moved = await this.moveStage(
      secretId,
      path,
      PREVIOUS,
      { MoveToVersionId: version, ...(holder === undefined ? {} : { RemoveFromVersionId: holder.id }) },
      options,
    );
    if (!moved)
      throw new PullSecretError(
        'STORE_CONFLICT',
        `AWS Secrets Manager secret ${path}: AWSPREVIOUS moved while version ${version} was being enabled; re-reading`,
      );
    return this.toVersionInfo(path, { ...found, stages: [PREVIOUS] });
  }

  /**
   * DeleteSecret with a recovery window of 7 days (not a forced delete): an operator can still
   * restore a secret deleted by mistake, and a push for the same name restores it when it is ours.
   * False when it does not exist or is already scheduled for deletion.
   */
  async deleteSecret(secretId: string, options?: CallOptions): Promise<boolean> {
    const path = this.checkedPath(secretId);
    await this.account.assert(this.callOptions(options));
    const result = await awsCallExpecting(
      this.target('DeleteSecret', path),
      this.callOptions(options),
      ['ResourceNotFoundException', 'InvalidRequestException'],
      (abortSignal) =>
        this.client.send(
          new DeleteSecretCommand({ SecretId: secretId, RecoveryWindowInDays: RECOVERY_WINDOW_DAYS }),
          { abortSignal },
        ),
    );
    if (result.ok) {
      this.checkArn(result.value.ARN, 'DeleteSecret');
      return true;
    }
    if (result.code === 'ResourceNotFoundException' || isMarkedForDeletion(result.error)) return false;
    throw this.classified(result.error, 'DeleteSecret', path);
  }

  /** Releases the SDK's sockets. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.client.destroy();
    this.account.close();
    return Promise.resolve();
  }

  /** DescribeSecret as AWS answers it (deleted-pending included); `undefined` on ResourceNotFoundException. */
  async describeRaw(
    secretId: string,
    options?: CallOptions,
  ): Promise<DescribeSecretCommandOutput | undefined> {
    const path = this.checkedPath(secretId);
    const result = await awsCallExpecting(
      this.target('DescribeSecret', path),
      this.callOptions(options),
      ['ResourceNotFoundException'],
      (abortSignal) => this.client.send(new DescribeSecretCommand({ SecretId: secretId }), { abortSignal }),
    );
    if (!result.ok) return undefined;
    this.checkArn(result.value.ARN, 'DescribeSecret');
    return result.value;
  }

  /** Restores a secret scheduled for deletion when it is ours for the same cluster; refuses anyone else's. */
  private async restoreIfOurs(
    secretId: string,
    labels: Readonly<Record<string, string>>,
    options: CallOptions | undefined,
  ): Promise<void> {
    const path = this.secretPath(secretId);
    const described = await this.describeRaw(secretId, options);
    if (described?.DeletedDate === undefined) return; // Restored or purged meanwhile: the caller reads it again.
    const tags = toLabels(described.Tags);
    if (
      !isManaged(tags) ||
      (labels['cluster-id'] !== undefined && tags['cluster-id'] !== labels['cluster-id'])
    ) {
      throw new PullSecretError(
        'SECRET_UNMANAGED',
        `secret ${path} is scheduled for deletion and is not managed by HyperFleet for this cluster; refusing to restore it: restore or delete it in AWS, or set another secret name`,
      );
    }
    await awsCall(this.target('RestoreSecret', path), this.callOptions(options), (abortSignal) =>
      this.client.send(new RestoreSecretCommand({ SecretId: secretId }), { abortSignal }),
    );
  }

  private async getValue(
    secretId: string,
    path: string,
    which: { VersionStage: string } | { VersionId: string },
    options: CallOptions | undefined,
  ) {
    const result = await awsCallExpecting(
      this.target('GetSecretValue', path),
      this.callOptions(options),
      ['ResourceNotFoundException', 'InvalidRequestException'],
      (abortSignal) =>
        this.client.send(new GetSecretValueCommand({ SecretId: secretId, ...which }), { abortSignal }),
    );
    if (!result.ok && result.code === 'InvalidRequestException' && !isMarkedForDeletion(result.error))
      throw this.classified(result.error, 'GetSecretValue', path);
    if (result.ok) this.checkArn(result.value.ARN, 'GetSecretValue');
    return result;
  }

  /**
   * The value field of a create or put: SecretString when the bytes are UTF-8 text, else SecretBinary.
   * @throws PAYLOAD_TOO_LARGE beyond Secrets Manager's 65,536 bytes.
   */
  private secretValue(data: Buffer): { SecretString: string } | { SecretBinary: Uint8Array } {
    if (data.length > this.maxPayloadBytes) {
      throw new PullSecretError(
        'PAYLOAD_TOO_LARGE',
        `pull secret is ${data.length} bytes; AWS Secrets Manager holds at most ${this.maxPayloadBytes} bytes per secret value`,
      );
    }
    const text = data.toString('utf8');
    return Buffer.from(text, 'utf8').equals(data)
      ? { SecretString: text }
      : { SecretBinary: new Uint8Array(data) };
  }

  /** The payload, its paths from the answer's real ARN (with AWS's suffix). */
  private toPayload(path: string, value: GetSecretValueCommandOutput): SecretPayload {
    const version = value.VersionId ?? '';
    const data =
      value.SecretBinary !== undefined
        ? Buffer.from(value.SecretBinary)
        : Buffer.from(value.SecretString ?? '', 'utf8');
    const arn = value.ARN ?? path;
    return { version, path: this.versionPath(arn, version), data, secretPath: arn };
  }

  private toMetadata(secretId: string, described: DescribeSecretCommandOutput): SecretMetadata {
    return {
      name: secretId,
      path: described.ARN ?? this.secretPath(secretId),
      labels: toLabels(described.Tags),
      createdTime: (described.CreatedDate ?? new Date(0)).toISOString(),
    };
  }

  /**
   * Refuses an answer about a secret outside the configured account and region: the credentials
   * belong to another account (or the endpoint to another region), and nothing may be written there.
   */
  private checkArn(arn: string | undefined, method: AwsMethod): void {
    if (arn === undefined) return;
    const [, , , region, account] = arn.split(':');
    if (account === this.config.accountId && region === this.config.region) return;
    throw new PullSecretError(
      'CONFIG_INVALID',
      `AWS Secrets Manager ${method} answered for account ${String(account)} in region ${String(region)}, but the configured store is ${this.location}: ` +
        'the credentials belong to another account (or the endpoint to another region); refusing to use it. Check AWS_SECRETS_ACCOUNT_ID and the IAM role.',
    );
  }

  /** Every version with its staging labels (ListSecretVersionIds, deprecated included, all pages); `undefined` when the secret does not exist. */
  private async listVersions(
    secretId: string,
    path: string,
    options: CallOptions | undefined,
  ): Promise<ListedVersion[] | undefined> {
    const versions: ListedVersion[] = [];
    let NextToken: string | undefined;
    do {
      const page = await awsCallExpecting(
        this.target('ListSecretVersionIds', path),
        this.callOptions(options),
        ['ResourceNotFoundException'],
        (abortSignal) =>
          this.client.send(
            new ListSecretVersionIdsCommand({
              SecretId: secretId,
              IncludeDeprecated: true,
              MaxResults: PAGE_SIZE,
              ...(NextToken === undefined ? {} : { NextToken }),
            }),
            { abortSignal },
          ),
      );
      if (!page.ok) return undefined;
      this.checkArn(page.value.ARN, 'ListSecretVersionIds');
      for (const v of page.value.Versions ?? []) {
        if (v.VersionId !== undefined)
          versions.push({
            id: v.VersionId,
            stages: v.VersionStages ?? [],
            createdTime: (v.CreatedDate ?? new Date(0)).toISOString(),
          });
      }
      NextToken = page.value.NextToken;
    } while (NextToken !== undefined);
    return versions;
  }

  /** One listed version, with the whole list it was found in. @throws SECRET_NOT_FOUND for a missing secret or version. */
  private async findVersion(
    secretId: string,
    path: string,
    version: string,
    options: CallOptions | undefined,
  ): Promise<{ found: ListedVersion; listed: ListedVersion[] }> {
    const listed = await this.listVersions(secretId, path, options);
    if (listed === undefined) throw this.notFound(path, 'does not exist');
    const found = listed.find((v) => v.id === version);
    if (found === undefined) throw this.notFound(path, `has no version ${version}`);
    return { found, listed };
  }

  /** UpdateSecretVersionStage of `stage`; false when AWS refuses the move because the label is not where the caller saw it. */
  private async moveStage(
    secretId: string,
    path: string,
    stage: string,
    move: { MoveToVersionId?: string; RemoveFromVersionId?: string },
    options: CallOptions | undefined,
  ): Promise<boolean> {
    await this.account.assert(this.callOptions(options));
    const result = await awsCallExpecting(
      this.target('UpdateSecretVersionStage', path),
      this.callOptions(options),
      ['InvalidParameterException', 'InvalidRequestException', 'ResourceNotFoundException'],
      (abortSignal) =>
        this.client.send(
          new UpdateSecretVersionStageCommand({ SecretId: secretId, VersionStage: stage, ...move }),
          { abortSignal },
        ),
    );
    if (result.ok) {
      this.checkArn(result.value.ARN, 'UpdateSecretVersionStage');
      return true;
    }
    if (result.code === 'ResourceNotFoundException') throw this.notFound(path, 'does not exist');
    if (result.code === 'InvalidRequestException') {
      if (isMarkedForDeletion(result.error)) throw this.notFound(path, 'is scheduled for deletion');
      throw this.classified(result.error, 'UpdateSecretVersionStage', path);
    }
    return false;
  }

  private toVersionInfo(path: string, v: ListedVersion): SecretVersionInfo {
    return {
      version: v.id,
      path: this.versionPath(path, v.id),
      state: v.stages.length > 0 ? 'ENABLED' : 'DISABLED',
      createdTime: v.createdTime,
    };
  }

  private versionPath(path: string, version: string): string {
    return `${path}/versions/${version}`;
  }

  private checkedPath(secretId: string): string {
    if (this.closed) throw new PullSecretError('STORE_FAILED', 'the AWS Secrets Manager store is closed');
    assertAwsSecretName(secretId);
    return this.secretPath(secretId);
  }

  private notFound(path: string, why: string): PullSecretError {
    return new PullSecretError(
      'SECRET_NOT_FOUND',
      `AWS Secrets Manager secret ${path} ${why}; check AWS_SECRETS_ACCOUNT_ID, AWS_SECRETS_REGION and the secret name.`,
    );
  }

  private classified(err: unknown, method: AwsMethod, resource: string): PullSecretError {
    return classifyAwsError(err, { method, resource });
  }

  private target(method: AwsMethod, resource: string) {
    return { method, resource };
  }

  private callOptions(options: CallOptions | undefined): AwsApiCallOptions {
    return {
      signal: options?.signal,
      timeoutMs: this.config.callTimeoutMs,
      onApiCall: this.config.onApiCall,
    };
  }
}

/** A version as ListSecretVersionIds lists it. */
interface ListedVersion {
  id: string;
  stages: string[];
  createdTime: string;
}

function toLabels(tags: Tag[] | undefined): Record<string, string> {
  return Object.fromEntries(
    (tags ?? []).filter((t) => t.Key !== undefined).map((t) => [t.Key as string, t.Value ?? '']),
  );
}
