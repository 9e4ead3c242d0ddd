import { randomBytes, randomUUID } from 'node:crypto';
import {
  AwsError,
  invalidParameter,
  invalidRequest,
  MARKED_FOR_DELETION,
  notFound,
  validation,
} from './errors.js';

/** Secrets Manager's rules, as the service enforces them. */
export const MAX_SECRET_BYTES = 65_536;
export const MAX_TAGS = 50;
/** Versions kept before unlabelled ones are removed (AWS: more than 100, older than 24 hours). */
export const MAX_VERSIONS = 100;
const NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
const TOKEN = /^[A-Za-z0-9-]{32,64}$/;
const TAG_TEXT = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;
const STAGE = /^[A-Za-z0-9_.:/=+\-@]{1,256}$/;

export interface StoredVersion {
  id: string;
  string?: string;
  binary?: Buffer;
  stages: Set<string>;
  created: number;
}

export interface StoredSecret {
  name: string;
  arn: string;
  accountId: string;
  kmsKeyId?: string;
  tags: Array<{ Key: string; Value: string }>;
  created: number;
  changed: number;
  deletedDate?: number;
  versions: StoredVersion[];
}

type Json = Record<string, unknown>;
const seconds = () => Date.now() / 1000;

function str(input: Json, key: string): string | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw new AwsError(
      'SerializationException',
      `Start of structure or map found where not expected for ${key}.`,
    );
  return value;
}

/** The in-memory service of one region: secrets per account, by name. */
export class SecretsManagerState {
  private readonly secrets = new Map<string, StoredSecret>();
  /** KMS keys Secrets Manager may not use (EncryptionFailure / DecryptionFailure). */
  readonly unusableKeys = new Set<string>();

  constructor(readonly region: string) {}

  /** Every secret of `accountId` (deleted-pending included). */
  list(accountId: string): StoredSecret[] {
    return [...this.secrets.values()].filter((s) => s.accountId === accountId);
  }

  /** A secret by name or ARN (full, or partial without the random suffix) in `accountId`. */
  find(accountId: string, secretId: string): StoredSecret | undefined {
    if (secretId.startsWith('arn:')) {
      const found = [...this.secrets.values()].find(
        (s) => s.arn === secretId || s.arn.slice(0, -7) === secretId,
      );
      return found?.accountId === accountId ? found : undefined;
    }
    return this.secrets.get(`${accountId}/${secretId}`);
  }

  /** Seeds a secret directly (no rules checked beyond the name), e.g. a foreign one. */
  seed(
    accountId: string,
    name: string,
    options: { tags?: Record<string, string>; values?: string[]; kmsKeyId?: string } = {},
  ): StoredSecret {
    const secret = this.newSecret(
      accountId,
      name,
      Object.entries(options.tags ?? {}).map(([Key, Value]) => ({ Key, Value })),
      options.kmsKeyId,
    );
    for (const value of options.values ?? [])
      this.addVersion(secret, randomUUID(), { string: value }, ['AWSCURRENT']);
    return secret;
  }

  /** Test power: removes every staging label of a version (AWSCURRENT moves to the newest other labelled one). */
  deprecate(accountId: string, name: string, versionId: string): void {
    const secret = this.find(accountId, name);
    const version = secret?.versions.find((v) => v.id === versionId);
    if (secret === undefined || version === undefined) throw new Error(`no version ${versionId} of ${name}`);
    const wasCurrent = version.stages.has('AWSCURRENT');
    version.stages.clear();
    if (wasCurrent) {
      const next = [...secret.versions].reverse().find((v) => v.stages.size > 0);
      if (next !== undefined) {
        next.stages.delete('AWSPREVIOUS');
        next.stages.add('AWSCURRENT');
      }
    }
  }

  createSecret(accountId: string, input: Json): Json {
    const name = str(input, 'Name') ?? '';
    if (!NAME.test(name))
      throw invalidParameter(
        'Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!',
      );
    const tags = checkTags(input.Tags);
    const existing = this.find(accountId, name);
    if (existing?.deletedDate !== undefined)
      throw invalidRequest(
        "You can't create this secret because a secret with this name is already scheduled for deletion.",
      );
    if (existing !== undefined)
      throw new AwsError(
        'ResourceExistsException',
        `The operation failed because the secret ${name} already exists.`,
      );
    const value = secretValue(input, false);
    const token = str(input, 'ClientRequestToken');
    if (token !== undefined && !TOKEN.test(token))
      throw validation(
        "Value at 'clientRequestToken' failed to satisfy constraint: Member must have length between 32 and 64",
      );
    const kmsKeyId = str(input, 'KmsKeyId');
    if (value !== undefined && kmsKeyId !== undefined && this.unusableKeys.has(kmsKeyId))
      throw encryptionFailure();
    const secret = this.newSecret(accountId, name, tags, kmsKeyId);
    if (value === undefined) return { ARN: secret.arn, Name: name };
    const version = this.addVersion(secret, token ?? randomUUID(), value, ['AWSCURRENT']);
    return { ARN: secret.arn, Name: name, VersionId: version.id };
  }

  describeSecret(accountId: string, input: Json): Json {
    const secret = this.require(accountId, input, false);
    const stages = Object.fromEntries(
      secret.versions.filter((v) => v.stages.size > 0).map((v) => [v.id, [...v.stages]]),
    );
    return {
      ARN: secret.arn,
      Name: secret.name,
      ...(secret.kmsKeyId === undefined ? {} : { KmsKeyId: secret.kmsKeyId }),
      Tags: secret.tags,
      CreatedDate: secret.created,
      LastChangedDate: secret.changed,
      ...(secret.deletedDate === undefined ? {} : { DeletedDate: secret.deletedDate }),
      VersionIdsToStages: stages,
    };
  }

  getSecretValue(accountId: string, input: Json): Json {
    const secret = this.require(accountId, input, true);
    const versionId = str(input, 'VersionId');
    const stage = str(input, 'VersionStage') ?? (versionId === undefined ? 'AWSCURRENT' : undefined);
    const version = secret.versions.find(
      (v) => (versionId === undefined || v.id === versionId) && (stage === undefined || v.stages.has(stage)),
    );
    if (version === undefined) {
      throw notFound(
        `Secrets Manager can't find the specified secret value for ${versionId === undefined ? `staging label: ${stage}` : `VersionId: ${versionId}`}`,
      );
    }
    if (secret.kmsKeyId !== undefined && this.unusableKeys.has(secret.kmsKeyId)) {
      throw new AwsError(
        'DecryptionFailure',
        "Secrets Manager can't decrypt the protected secret text using the provided KMS key.",
      );
    }
    return {
      ARN: secret.arn,
      Name: secret.name,
      VersionId: version.id,
      ...(version.string === undefined ? {} : { SecretString: version.string }),
      ...(version.binary === undefined ? {} : { SecretBinary: version.binary.toString('base64') }),
      VersionStages: [...version.stages],
      CreatedDate: version.created,
    };
  }

  /**
   * PutSecretValue, with `ClientRequestToken` idempotence: same token and value = that version again; other value =
   * ResourceExistsException. `VersionStages` given: only those labels, each moved off the version holding it;
   * absent: AWSCURRENT (https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_PutSecretValue.html).
   */
  putSecretValue(accountId: string, input: Json): Json {
    const secret = this.require(accountId, input, true);
    const value = secretValue(input, true) as { string?: string; binary?: Buffer };
    const token = str(input, 'ClientRequestToken') ?? randomUUID();
    if (!TOKEN.test(token))
      throw validation(
        "Value at 'clientRequestToken' failed to satisfy constraint: Member must have length between 32 and 64",
      );
    const stages = input.VersionStages === undefined ? ['AWSCURRENT'] : checkStages(input.VersionStages);
    const existing = secret.versions.find((v) => v.id === token);
    if (existing !== undefined) {
      const same =
        existing.string === value.string &&
        (existing.binary === undefined
          ? value.binary === undefined
          : value.binary !== undefined && existing.binary.equals(value.binary));
      if (!same)
        throw new AwsError(
          'ResourceExistsException',
          "You can't modify an existing version, you can only create a new version.",
        );
      return {
        ARN: secret.arn,
        Name: secret.name,
        VersionId: existing.id,
        VersionStages: [...existing.stages],
      };
    }
    if (secret.kmsKeyId !== undefined && this.unusableKeys.has(secret.kmsKeyId)) throw encryptionFailure();
    const version = this.addVersion(secret, token, value, stages);
    return { ARN: secret.arn, Name: secret.name, VersionId: version.id, VersionStages: [...version.stages] };
  }

  /**
   * UpdateSecretVersionStage: moves one label; a label attached elsewhere moves only with the matching
   * RemoveFromVersionId; moving AWSCURRENT puts AWSPREVIOUS on the version it left and touches no other label
   * (AWSPENDING stays where it is): https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_UpdateSecretVersionStage.html
   */
  updateSecretVersionStage(accountId: string, input: Json): Json {
    const secret = this.require(accountId, input, true);
    const stage = str(input, 'VersionStage') ?? '';
    if (!STAGE.test(stage))
      throw validation(
        "Value at 'versionStage' failed to satisfy constraint: Member must have length between 1 and 256",
      );
    const moveTo = str(input, 'MoveToVersionId');
    const removeFrom = str(input, 'RemoveFromVersionId');
    const holder = secret.versions.find((v) => v.stages.has(stage));
    const target = moveTo === undefined ? undefined : secret.versions.find((v) => v.id === moveTo);
    if (moveTo !== undefined && target === undefined)
      throw invalidParameter(`The version ${moveTo} doesn't exist.`);
    if (removeFrom !== undefined && !secret.versions.some((v) => v.id === removeFrom))
      throw invalidParameter(`The version ${removeFrom} doesn't exist.`);
    if (target !== undefined && holder === target) return { ARN: secret.arn, Name: secret.name };
    if (holder !== undefined && removeFrom !== holder.id) {
      throw invalidParameter(
        `The staging label ${stage} is currently attached to version ${holder.id}, so you must explicitly reference that version in RemoveFromVersionId.`,
      );
    }
    if (holder === undefined && removeFrom !== undefined)
      throw invalidParameter(`The staging label ${stage} is not attached to version ${removeFrom}.`);
    if (target === undefined) {
      if (stage === 'AWSCURRENT')
        throw invalidParameter(
          'You can only move staging label AWSCURRENT to a different secret version. It can’t be completely removed.',
        );
      holder?.stages.delete(stage);
    } else {
      holder?.stages.delete(stage);
      target.stages.add(stage);
      if (stage === 'AWSCURRENT' && holder !== undefined) this.moveLabel(secret, 'AWSPREVIOUS', holder);
    }
    secret.changed = seconds();
    return { ARN: secret.arn, Name: secret.name };
  }

  listSecretVersionIds(accountId: string, input: Json): Json {
    const secret = this.require(accountId, input, false);
    const max = typeof input.MaxResults === 'number' ? input.MaxResults : 100;
    if (max < 1 || max > 100)
      throw validation(
        "Value at 'maxResults' failed to satisfy constraint: Member must have value between 1 and 100",
      );
    const all = secret.versions.filter((v) => input.IncludeDeprecated === true || v.stages.size > 0);
    const start = Number(str(input, 'NextToken') ?? '0');
    if (!Number.isInteger(start) || start < 0 || start > all.length)
      throw invalidParameter('The NextToken is invalid.');
    const page = all.slice(start, start + max);
    return {
      ARN: secret.arn,
      Name: secret.name,
      Versions: page.map((v) => ({
        VersionId: v.id,
        VersionStages: [...v.stages],
        CreatedDate: v.created,
        ...(secret.kmsKeyId === undefined ? {} : { KmsKeyIds: [secret.kmsKeyId] }),
      })),
      ...(start + max < all.length ? { NextToken: String(start + max) } : {}),
    };
  }

  deleteSecret(accountId: string, input: Json): Json {
    const secret = this.require(accountId, input, false);
    const force = input.ForceDeleteWithoutRecovery === true;
    const window = input.RecoveryWindowInDays;
    if (force && window !== undefined)
      throw invalidParameter(
        "You can't use ForceDeleteWithoutRecovery in conjunction with RecoveryWindowInDays.",
      );
    const days = typeof window === 'number' ? window : 30;
    if (!force && (days < 7 || days > 30))
      throw invalidParameter('The RecoveryWindowInDays value must be between 7 and 30 days (inclusive).');
    if (secret.deletedDate !== undefined)
      throw invalidRequest(
        "You can't perform this operation on the secret because it was already scheduled for deletion.",
      );
    const deletion = seconds() + (force ? 0 : days * 86_400);
    if (force) this.secrets.delete(`${accountId}/${secret.name}`);
    else secret.deletedDate = seconds();
    return { ARN: secret.arn, Name: secret.name, DeletionDate: deletion };
  }

  restoreSecret(accountId: string, input: Json): Json {
    const secret = this.require(accountId, input, false);
    delete secret.deletedDate;
    return { ARN: secret.arn, Name: secret.name };
  }

  /**
   * A missing secret is ResourceNotFoundException; one scheduled for deletion answers InvalidRequestException to
   * reads of its value and to writes, but DescribeSecret shows it with `DeletedDate`
   * (https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html, "Errors").
   */
  private require(accountId: string, input: Json, refuseDeleted: boolean): StoredSecret {
    const secret = this.find(accountId, str(input, 'SecretId') ?? '');
    if (secret === undefined) throw notFound();
    if (refuseDeleted && secret.deletedDate !== undefined) throw invalidRequest(MARKED_FOR_DELETION);
    return secret;
  }

  /**
   * A secret's ARN ends in `-` and 6 random characters after its name ("Secrets Manager adds a hyphen
   * and six random characters after the secret name at the end of the ARN":
   * https://docs.aws.amazon.com/secretsmanager/latest/userguide/reference_iam-permissions.html#iam-resources;
   * CreateSecret's answer carries it: https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_CreateSecret.html).
   */
  private newSecret(
    accountId: string,
    name: string,
    tags: StoredSecret['tags'],
    kmsKeyId: string | undefined,
  ): StoredSecret {
    const suffix = randomBytes(6)
      .toString('base64')
      .replace(/[^A-Za-z0-9]/g, 'x')
      .slice(0, 6);
    const now = seconds();
    const secret: StoredSecret = {
      name,
      arn: `arn:aws:secretsmanager:${this.region}:${accountId}:secret:${name}-${suffix}`,
      accountId,
      tags,
      created: now,
      changed: now,
      versions: [],
      ...(kmsKeyId === undefined ? {} : { kmsKeyId }),
    };
    this.secrets.set(`${accountId}/${name}`, secret);
    return secret;
  }

  /** Adds a version with `stages`; the first version always becomes AWSCURRENT; a moved AWSCURRENT leaves AWSPREVIOUS behind. */
  private addVersion(
    secret: StoredSecret,
    id: string,
    value: { string?: string; binary?: Buffer },
    stages: readonly string[],
  ): StoredVersion {
    const version: StoredVersion = { id, ...value, stages: new Set(), created: seconds() };
    const previous = secret.versions.find((v) => v.stages.has('AWSCURRENT'));
    secret.versions.push(version);
    for (const stage of stages) this.moveLabel(secret, stage, version);
    if (previous === undefined) version.stages.add('AWSCURRENT');
    else if (version.stages.has('AWSCURRENT')) this.moveLabel(secret, 'AWSPREVIOUS', previous);
    // Unlabelled versions beyond the quota go first, oldest first (AWS's clean-up).
    while (secret.versions.length > MAX_VERSIONS) {
      const unlabelled = secret.versions.findIndex((v) => v.stages.size === 0);
      if (unlabelled < 0)
        throw new AwsError(
          'LimitExceededException',
          'You have exceeded the maximum number of versions for this secret.',
        );
      secret.versions.splice(unlabelled, 1);
    }
    secret.changed = seconds();
    return version;
  }

  private moveLabel(secret: StoredSecret, stage: string, to: StoredVersion): void {
    for (const v of secret.versions) v.stages.delete(stage);
    to.stages.add(stage);
  }
}

function encryptionFailure(): AwsError {
  return new AwsError(
    'EncryptionFailure',
    "Secrets Manager can't encrypt the protected secret text using the provided KMS key. Check that the KMS key is available, enabled, and not in an invalid state.",
  );
}

function checkTags(raw: unknown): StoredSecret['tags'] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new AwsError('SerializationException', 'Tags must be a list.');
  if (raw.length > MAX_TAGS)
    throw validation(
      `Value at 'tags' failed to satisfy constraint: Member must have length less than or equal to ${MAX_TAGS}`,
    );
  const seen = new Set<string>();
  return raw.map((tag: unknown) => {
    const { Key, Value } = (tag ?? {}) as { Key?: unknown; Value?: unknown };
    if (typeof Key !== 'string' || Key.length < 1 || Key.length > 128 || !TAG_TEXT.test(Key))
      throw validation(
        "Value at 'tags.member.key' failed to satisfy constraint: Member must have length between 1 and 128",
      );
    if (Key.toLowerCase().startsWith('aws:'))
      throw invalidParameter('Invalid tag key. The aws: prefix is reserved for AWS use.');
    const value = typeof Value === 'string' ? Value : '';
    if (value.length > 256 || !TAG_TEXT.test(value))
      throw validation(
        "Value at 'tags.member.value' failed to satisfy constraint: Member must have length less than or equal to 256",
      );
    if (seen.has(Key)) throw invalidParameter('Invalid parameter: duplicate tag keys.');
    seen.add(Key);
    return { Key, Value: value };
  });
}

function checkStages(raw: unknown): string[] {
  if (
    !Array.isArray(raw) ||
    raw.length < 1 ||
    raw.length > 20 ||
    !raw.every((s) => typeof s === 'string' && STAGE.test(s))
  ) {
    throw validation(
      "Value at 'versionStages' failed to satisfy constraint: Member must have length between 1 and 20",
    );
  }
  return raw as string[];
}

/** The value of a create or put: exactly one of SecretString and SecretBinary, at most 65,536 bytes. */
function secretValue(input: Json, required: boolean): { string?: string; binary?: Buffer } | undefined {
  const text = str(input, 'SecretString');
  const binary = str(input, 'SecretBinary');
  if (text !== undefined && binary !== undefined)
    throw invalidParameter('You must provide either SecretString or SecretBinary, but not both.');
  if (text === undefined && binary === undefined) {
    if (required) throw invalidParameter('You must provide either SecretString or SecretBinary.');
    return undefined;
  }
  const bytes = text === undefined ? Buffer.from(binary ?? '', 'base64') : Buffer.from(text, 'utf8');
  if (bytes.length > MAX_SECRET_BYTES)
    throw validation(
      `Value at '${text === undefined ? 'secretBinary' : 'secretString'}' failed to satisfy constraint: Member must have length less than or equal to ${MAX_SECRET_BYTES}`,
    );
  return text === undefined ? { binary: bytes } : { string: text };
}
