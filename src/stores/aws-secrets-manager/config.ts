import { z } from 'zod';
import type { ApiCallHook, EnvSetting } from '../factory.js';
import { isLoopbackHost } from '../../util/loopback.js';
import { parseHostOnlyUrl } from '../endpoint-url.js';

/** Settings of the AWS Secrets Manager store. */
export interface AwsStoreConfig {
  /** The 12-digit AWS account that holds the secrets; every answer's ARN is checked against it. */
  accountId: string;
  /** The region that holds the secrets, e.g. `us-east-1`. */
  region: string;
  /**
   * Customer-managed KMS key for new secrets (key id, key ARN, alias name or alias ARN); default:
   * the AWS-managed key.
   */
  kmsKeyId?: string;
  /** URL of a non-default endpoint (a VPC endpoint, or a local test server); plain http only on loopback. */
  endpoint?: string;
  /** Deadline of each API call, in milliseconds. */
  callTimeoutMs: number;
  /** Optional observer of API calls, for metrics. Not settable from the environment. */
  onApiCall?: ApiCallHook;
}

/** Default deadline of one Secrets Manager call. */
export const DEFAULT_AWS_CALL_TIMEOUT_MS = 30_000;

/** Secrets Manager's limit on one secret value (SecretString or SecretBinary): 65,536 bytes. */
export const AWS_PAYLOAD_LIMIT_BYTES = 65_536;

const ACCOUNT_RULE = 'must be a 12-digit AWS account id';
const REGION_RULE = 'must be an AWS region name such as us-east-1, eu-central-1 or us-gov-west-1';
const KMS_RULE = 'must be a KMS key id, key ARN, alias name (alias/...) or alias ARN';
const ENDPOINT_RULE =
  'must be an https:// URL (http:// only on a loopback host: localhost, 127.0.0.0/8 or [::1]) ' +
  'without path, query or credentials';
const TIMEOUT_RULE = 'must be a whole number of milliseconds between 1 and 600000';

/** AWS region names: `us-east-1`, `ap-southeast-2`, `us-gov-west-1`, `cn-north-1`, `us-isob-east-1`. */
const AWS_REGION_PATTERN = /^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$/;
/** KMS key references Secrets Manager accepts as `KmsKeyId`. */
const KMS_KEY =
  /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32}|alias\/[A-Za-z0-9/_-]{1,250}|arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:(key\/[A-Za-z0-9-]{1,100}|alias\/[A-Za-z0-9/_-]{1,250}))$/;

/** True for an endpoint URL the store accepts (see ENDPOINT_RULE). */
function isAcceptableEndpoint(value: string): boolean {
  const url = parseHostOnlyUrl(value);
  if (url === undefined) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

const callTimeoutMs = z.coerce
  .number({ error: TIMEOUT_RULE })
  .int({ error: TIMEOUT_RULE })
  .min(1, { error: TIMEOUT_RULE })
  .max(600_000, { error: TIMEOUT_RULE })
  .default(DEFAULT_AWS_CALL_TIMEOUT_MS);

/** The settings shared by every account and region (the adapter's `store.settings`). */
const sharedShape = {
  kmsKeyId: z.string({ error: KMS_RULE }).regex(KMS_KEY, { error: KMS_RULE }).optional(),
  endpoint: z
    .string({ error: ENDPOINT_RULE })
    .refine(isAcceptableEndpoint, { error: ENDPOINT_RULE })
    .optional(),
  callTimeoutMs,
  onApiCall: z
    .custom<ApiCallHook>((value) => typeof value === 'function', { error: 'must be a function' })
    .optional(),
};

/**
 * Schema of `AwsStoreConfig`. Accepts the environment's strings and parsed values alike; messages
 * describe the rule and never echo the value.
 */
export const awsStoreConfigSchema: z.ZodType<AwsStoreConfig> = z
  .object({
    accountId: z.string({ error: ACCOUNT_RULE }).regex(/^[0-9]{12}$/, { error: ACCOUNT_RULE }),
    region: z.string({ error: REGION_RULE }).regex(AWS_REGION_PATTERN, { error: REGION_RULE }),
    ...sharedShape,
  })
  .strict();

/** The adapter's `store.settings` for AWS: account and region are not among them (each cluster names them). */
export const awsSharedSettingsSchema = z.object(sharedShape).strict();

/**
 * Environment variables of the AWS store. Our own names, not the SDK's `AWS_REGION` /
 * `AWS_ACCOUNT_ID`: EKS injects `AWS_REGION` into every pod that has IRSA or Pod Identity (the
 * cluster's region, not necessarily the customer's), and the SDK reads `AWS_ACCOUNT_ID` for its
 * own purposes; a variable set for something else must neither select this store nor aim writes
 * at an account. The credentials' variables are the SDK's own (default provider chain).
 */
export const awsStoreEnv: Readonly<Record<string, EnvSetting>> = {
  AWS_SECRETS_ACCOUNT_ID: {
    key: 'accountId',
    help: 'AWS account (12 digits) that holds the pull secrets (required); answers from another account are refused.',
  },
  AWS_SECRETS_REGION: {
    key: 'region',
    help: 'AWS region that holds the pull secrets, e.g. us-east-1 (required; AWS_REGION is not read for this).',
  },
  AWS_SECRETS_KMS_KEY_ID: {
    key: 'kmsKeyId',
    help:
      'Customer-managed KMS key for new secrets: key id, key ARN, alias/NAME or alias ARN. ' +
      'Default: the AWS-managed key aws/secretsmanager.',
  },
  AWS_SECRETS_ENDPOINT: {
    key: 'endpoint',
    help:
      'URL of a non-default Secrets Manager endpoint (a VPC endpoint, or a local test server; ' +
      'http:// only on loopback). Default: the regional endpoint.',
  },
  AWS_SECRETS_CALL_TIMEOUT_MS: {
    key: 'callTimeoutMs',
    help: `Deadline of each Secrets Manager call in milliseconds (default ${DEFAULT_AWS_CALL_TIMEOUT_MS}).`,
  },
};

/** The AWS partition of a region, the second field of its ARNs (`aws`, `aws-cn`, `aws-us-gov`, ...). */
export function awsPartition(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  if (region.startsWith('us-isob-')) return 'aws-iso-b';
  if (region.startsWith('us-iso-')) return 'aws-iso';
  if (region.startsWith('eu-isoe-')) return 'aws-iso-e';
  return 'aws';
}

/** Where the secrets of an account and region live: `arn:aws:secretsmanager:REGION:ACCOUNT`. */
export function awsLocation(accountId: string, region: string): string {
  return `arn:${awsPartition(region)}:secretsmanager:${region}:${accountId}`;
}
