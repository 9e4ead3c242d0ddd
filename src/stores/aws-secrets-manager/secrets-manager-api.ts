/**
 * The AWS Secrets Manager calls the store is built from: each request with its deadline, account
 * check and ARN check, the answers the store reads (DescribeSecret, GetSecretValue, every
 * ListSecretVersionIds page, UpdateSecretVersionStage), and the mapping of answers to the store's types.
 */
import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  ListSecretVersionIdsCommand,
  UpdateSecretVersionStageCommand,
  type DescribeSecretCommandOutput,
  type GetSecretValueCommandOutput,
  type SecretsManagerClient,
  type Tag,
} from '@aws-sdk/client-secrets-manager';
import type { STSClient } from '@aws-sdk/client-sts';
import { PullSecretError } from '../../errors/index.js';
import type { CallOptions, SecretMetadata, SecretPayload, SecretVersionInfo } from '../store.js';
import { AccountCheck } from './account-check.js';
import { awsCallExpecting, type AwsApiCallOptions } from './api-call.js';
import { AWS_PAYLOAD_LIMIT_BYTES, awsLocation, type AwsStoreConfig } from './config.js';
import { classifyAwsError, isMarkedForDeletion, type AwsMethod } from './errors.js';
import { assertAwsSecretName } from './names.js';

/** The staging label of the current version. */
export const CURRENT = 'AWSCURRENT';
/** The label a new version carries until the compare-and-swap of AWSCURRENT makes it current. */
export const PENDING = 'AWSPENDING';
/** The label AWS moves to the version AWSCURRENT leaves: the overlap of the previous value. */
export const PREVIOUS = 'AWSPREVIOUS';
/** Versions asked for per ListSecretVersionIds page by `describe`. */
const PAGE_SIZE = 100;

/** A version as ListSecretVersionIds lists it. */
interface ListedVersion {
  id: string;
  stages: string[];
  createdTime: string;
}

/** One Secrets Manager client of one configured account and region, and the store's use of its answers. */
export class SecretsManagerApi {
  readonly location: string;
  closed = false;
  readonly account: AccountCheck;

  constructor(
    readonly client: SecretsManagerClient,
    readonly config: AwsStoreConfig,
    sts: STSClient,
  ) {
    this.location = awsLocation(config.accountId, config.region);
    this.account = new AccountCheck(sts, config.accountId);
  }

  /** The secret's ARN without AWS's random suffix (`arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME`). */
  secretPath(secretId: string): string {
    return `${this.location}:secret:${secretId}`;
  }

  /** The secret's path after checking the name. @throws STORE_FAILED when closed, IDENTIFIER_INVALID. */
  checkedPath(secretId: string): string {
    if (this.closed) throw new PullSecretError('STORE_FAILED', 'the AWS Secrets Manager store is closed');
    assertAwsSecretName(secretId);
    return this.secretPath(secretId);
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

  /** GetSecretValue; ResourceNotFoundException and a deletion refusal are answers, any other refusal throws. */
  async getValue(
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
   * Every version with its staging labels (ListSecretVersionIds, deprecated included, all pages);
   * `undefined` when the secret does not exist.
   */
  async listVersions(
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

  /**
   * One listed version, with the whole list it was found in.
   * @throws SECRET_NOT_FOUND for a missing secret or version.
   */
  async findVersion(
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

  /**
   * UpdateSecretVersionStage of `stage` as AWS answers it: the error names in `expected` are
   * answers (`ok: false`), any other refusal throws classified.
   */
  async sendStageMove<C extends string>(
    secretId: string,
    path: string,
    stage: string,
    move: { MoveToVersionId?: string; RemoveFromVersionId?: string },
    options: CallOptions | undefined,
    expected: readonly C[],
  ) {
    const result = await awsCallExpecting(
      this.target('UpdateSecretVersionStage', path),
      this.callOptions(options),
      expected,
      (abortSignal) =>
        this.client.send(
          new UpdateSecretVersionStageCommand({ SecretId: secretId, VersionStage: stage, ...move }),
          { abortSignal },
        ),
    );
    if (result.ok) this.checkArn(result.value.ARN, 'UpdateSecretVersionStage');
    return result;
  }

  /**
   * UpdateSecretVersionStage of `stage` after the account check; false when AWS refuses the move
   * because the label is not where the caller saw it.
   */
  async moveStage(
    secretId: string,
    path: string,
    stage: string,
    move: { MoveToVersionId?: string; RemoveFromVersionId?: string },
    options: CallOptions | undefined,
  ): Promise<boolean> {
    await this.account.assert(this.callOptions(options));
    const result = await this.sendStageMove(secretId, path, stage, move, options, [
      'InvalidParameterException',
      'InvalidRequestException',
      'ResourceNotFoundException',
    ]);
    if (result.ok) return true;
    if (result.code === 'ResourceNotFoundException') throw this.notFound(path, 'does not exist');
    if (result.code === 'InvalidRequestException') {
      if (isMarkedForDeletion(result.error)) throw this.notFound(path, 'is scheduled for deletion');
      throw this.classified(result.error, 'UpdateSecretVersionStage', path);
    }
    return false;
  }

  /**
   * Refuses an answer about a secret outside the configured account and region: the credentials
   * belong to another account (or the endpoint to another region), and nothing may be written there.
   */
  checkArn(arn: string | undefined, method: AwsMethod): void {
    if (arn === undefined) return;
    const [, , , region, account] = arn.split(':');
    if (account === this.config.accountId && region === this.config.region) return;
    throw new PullSecretError(
      'CONFIG_INVALID',
      `AWS Secrets Manager ${method} answered for account ${String(account)} in region ${String(region)}, ` +
        `but the configured store is ${this.location}: ` +
        'the credentials belong to another account (or the endpoint to another region); refusing to use it. ' +
        'Check AWS_SECRETS_ACCOUNT_ID and the IAM role.',
    );
  }

  /**
   * The value field of a create or put: SecretString when the bytes are UTF-8 text, else SecretBinary.
   * @throws PAYLOAD_TOO_LARGE beyond Secrets Manager's 65,536 bytes.
   */
  secretValue(data: Buffer): { SecretString: string } | { SecretBinary: Uint8Array } {
    if (data.length > AWS_PAYLOAD_LIMIT_BYTES) {
      throw new PullSecretError(
        'PAYLOAD_TOO_LARGE',
        `pull secret is ${data.length} bytes; ` +
          `AWS Secrets Manager holds at most ${AWS_PAYLOAD_LIMIT_BYTES} bytes per secret value`,
      );
    }
    const text = data.toString('utf8');
    return Buffer.from(text, 'utf8').equals(data)
      ? { SecretString: text }
      : { SecretBinary: new Uint8Array(data) };
  }

  /** The payload, its paths from the answer's real ARN (with AWS's suffix). */
  toPayload(path: string, value: GetSecretValueCommandOutput): SecretPayload {
    const version = value.VersionId ?? '';
    const data =
      value.SecretBinary !== undefined
        ? Buffer.from(value.SecretBinary)
        : Buffer.from(value.SecretString ?? '', 'utf8');
    const arn = value.ARN ?? path;
    return { version, path: this.versionPath(arn, version), data, secretPath: arn };
  }

  toMetadata(secretId: string, described: DescribeSecretCommandOutput): SecretMetadata {
    return {
      name: secretId,
      path: described.ARN ?? this.secretPath(secretId),
      labels: toLabels(described.Tags),
      createdTime: (described.CreatedDate ?? new Date(0)).toISOString(),
    };
  }

  /** A listed version: ENABLED while it carries any staging label, DISABLED (deprecated) without. */
  toVersionInfo(path: string, v: ListedVersion): SecretVersionInfo {
    return {
      version: v.id,
      path: this.versionPath(path, v.id),
      state: v.stages.length > 0 ? 'ENABLED' : 'DISABLED',
      createdTime: v.createdTime,
    };
  }

  versionPath(path: string, version: string): string {
    return `${path}/versions/${version}`;
  }

  notFound(path: string, why: string): PullSecretError {
    return new PullSecretError(
      'SECRET_NOT_FOUND',
      `AWS Secrets Manager secret ${path} ${why}; ` +
        'check AWS_SECRETS_ACCOUNT_ID, AWS_SECRETS_REGION and the secret name.',
    );
  }

  classified(err: unknown, method: AwsMethod, resource: string): PullSecretError {
    return classifyAwsError(err, { method, resource });
  }

  target(method: AwsMethod, resource: string) {
    return { method, resource };
  }

  callOptions(options: CallOptions | undefined): AwsApiCallOptions {
    return {
      signal: options?.signal,
      timeoutMs: this.config.callTimeoutMs,
      onApiCall: this.config.onApiCall,
    };
  }
}

/** A secret's tags as labels. */
export function toLabels(tags: Tag[] | undefined): Record<string, string> {
  return Object.fromEntries(
    (tags ?? []).filter((t) => t.Key !== undefined).map((t) => [t.Key as string, t.Value ?? '']),
  );
}
