import { PullSecretError, type ErrorCode } from '../../errors/index.js';
import { trimServerText } from '../../errors/server-text.js';

/**
 * Classification of AWS SDK errors into `PullSecretError` (each store classifies its SDK's errors at
 * the edge; the pipeline only looks at `retryable`).
 */

/** The Secrets Manager operations this store makes. */
export type AwsMethod =
  | 'CreateSecret'
  | 'DescribeSecret'
  | 'GetSecretValue'
  | 'PutSecretValue'
  | 'UpdateSecretVersionStage'
  | 'ListSecretVersionIds'
  | 'DeleteSecret'
  | 'RestoreSecret'
  /** STS, before the first write: needs no permission (docs/aws-identity.md). */
  | 'GetCallerIdentity';

/** Where a failed call was aimed, for the message: an ARN, never payload bytes. */
export interface AwsCallTarget {
  method: AwsMethod;
  resource: string;
}

/** Error names (`__type` without its namespace) that mean "slow down". */
const THROTTLED = new Set([
  'ThrottlingException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'Throttling',
  'ThrottledException',
  'SlowDown',
  'RequestThrottled',
  'RequestThrottledException',
]);
/** Errors of the request's signature or credentials. */
const UNAUTHENTICATED = new Set([
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'IncompleteSignature',
  'IncompleteSignatureException',
  'MissingAuthenticationToken',
  'MissingAuthenticationTokenException',
  'ExpiredTokenException',
  'InvalidClientTokenId',
  'SignatureDoesNotMatch',
  'CredentialsProviderError',
]);
/** Node socket error codes: the connection broke before an answer existed. */
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPROTO',
]);

/** Text of AWS's refusal of any change to a secret scheduled for deletion. */
const MARKED_FOR_DELETION = /marked for deletion|scheduled for deletion/i;

/** The error's name as the SDK reports it (the service's `__type`), or undefined. */
export function awsErrorName(err: unknown): string | undefined {
  const name = (err as { name?: unknown } | null)?.name;
  return typeof name === 'string' && name !== '' && name !== 'Error' ? name : undefined;
}

function httpStatus(err: unknown): number | undefined {
  const status = (err as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata?.httpStatusCode;
  return typeof status === 'number' ? status : undefined;
}

function socketErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && SOCKET_ERRORS.has(code)) return code;
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? [...SOCKET_ERRORS].find((s) => message.includes(s)) : undefined;
}

/** The label an API call is counted under: `OK`, the AWS error name, `CANCELLED`, or a socket code. */
export function callCode(err: unknown): string {
  return awsErrorName(err) ?? socketErrorCode(err) ?? 'UNKNOWN';
}

/** True for AWS's answer to a change of a secret that is scheduled for deletion. */
export function isMarkedForDeletion(err: unknown): boolean {
  const message = (err as { message?: unknown } | null)?.message;
  return (
    awsErrorName(err) === 'InvalidRequestException' &&
    typeof message === 'string' &&
    MARKED_FOR_DELETION.test(message)
  );
}

/** Error code and one sentence of advice for an AWS error name. */
function adviceFor(name: string, status: number | undefined, method: AwsMethod): [ErrorCode, string] {
  if (THROTTLED.has(name) || status === 429)
    return [
      'STORE_QUOTA_EXCEEDED',
      'A Secrets Manager request quota was hit (ThrottlingException); retrying with backoff.',
    ];
  if (UNAUTHENTICATED.has(name)) {
    return [
      'STORE_UNAUTHENTICATED',
      'The AWS credentials were missing or rejected: on EKS check the IAM role of the service account (IRSA annotation or Pod Identity association); see docs/aws-identity.md.',
    ];
  }
  switch (name) {
    case 'AccessDeniedException':
      return [
        'STORE_PERMISSION_DENIED',
        `Allow the adapter's IAM role the action secretsmanager:${method} on arn:aws:secretsmanager:REGION:ACCOUNT:secret:hyperfleet-* (pull-secret preflight --store aws prints the policy).`,
      ];
    case 'EncryptionFailure':
    case 'DecryptionFailure':
    case 'KMSAccessDeniedException':
    case 'KMSInvalidStateException':
    case 'KMSDisabledException':
    case 'KMSNotFoundException':
      return [
        'STORE_PERMISSION_DENIED',
        "The KMS key could not be used: check that AWS_SECRETS_KMS_KEY_ID names an enabled key in the account and region, and that the adapter's IAM role may use it (kms:GenerateDataKey and kms:Decrypt, in the key policy).",
      ];
    case 'ResourceNotFoundException':
      return [
        'SECRET_NOT_FOUND',
        'The secret or version does not exist; check AWS_SECRETS_ACCOUNT_ID, AWS_SECRETS_REGION and the secret name.',
      ];
    case 'ResourceExistsException':
      return ['STORE_CONFLICT', 'The resource was created concurrently; re-reading and retrying.'];
    case 'InternalServiceError':
    case 'InternalFailure':
    case 'InternalServerError':
      return ['STORE_INTERNAL', 'The service reported an internal error; retrying.'];
    case 'ServiceUnavailable':
    case 'ServiceUnavailableException':
      return ['STORE_UNAVAILABLE', 'The service is unavailable; retrying.'];
    case 'TimeoutError':
    case 'RequestTimeout':
    case 'RequestTimeoutException':
      return [
        'STORE_TIMEOUT',
        'The call did not finish within its deadline (AWS_SECRETS_CALL_TIMEOUT_MS); retrying.',
      ];
    case 'LimitExceededException':
      return [
        'STORE_FAILED',
        'A Secrets Manager quota on the number of secrets or versions was reached; versions are added at most once per content change, so check what else writes to this account.',
      ];
    case 'InvalidParameterException':
    case 'InvalidRequestException':
    case 'ValidationException':
    case 'MalformedPolicyDocumentException':
    case 'PreconditionNotMetException':
    case 'SerializationException':
      return [
        'STORE_INVALID_REQUEST',
        'The request was rejected as invalid; check the secret name, the tags and the payload size (65,536 bytes at most).',
      ];
    default:
      if (status !== undefined && status >= 500)
        return ['STORE_INTERNAL', `The service answered HTTP ${status}; retrying.`];
      return ['STORE_FAILED', 'The call failed permanently.'];
  }
}

/**
 * Turns an SDK error into a `PullSecretError` whose message names the operation, the resource and
 * the AWS error name, says what to do, and never carries payload bytes: the server's own text is
 * repeated (bounded by `trimServerText`) except for CreateSecret and PutSecretValue, the requests holding secret bytes.
 */
export function classifyAwsError(err: unknown, target: AwsCallTarget): PullSecretError {
  if (err instanceof PullSecretError) return err;
  const where = `AWS Secrets Manager ${target.method} failed for ${target.resource}`;
  const name = awsErrorName(err);
  const socket = socketErrorCode(err);
  if (socket !== undefined && (name === undefined || httpStatus(err) === undefined)) {
    return new PullSecretError(
      'STORE_UNAVAILABLE',
      `${where}: ${socket}. The endpoint could not be reached; retrying.`,
      { cause: err },
    );
  }
  if (name === undefined)
    return new PullSecretError('STORE_FAILED', `${where}: unexpected client error.`, { cause: err });
  const [code, advice] = adviceFor(name, httpStatus(err), target.method);
  const message = (err as { message?: unknown }).message;
  const holdsValue = target.method === 'PutSecretValue' || target.method === 'CreateSecret';
  const detail = holdsValue || typeof message !== 'string' ? '' : trimServerText(message);
  const shown = detail === '' || detail === name ? '' : ` (${detail})`;
  return new PullSecretError(code, `${where}: ${name}${shown}. ${advice}`, { cause: err });
}

/** The error for a call the caller aborted through its `AbortSignal`. */
export function awsAbortedError(target: AwsCallTarget, cause: unknown): PullSecretError {
  return new PullSecretError(
    'ABORTED',
    `AWS Secrets Manager ${target.method} for ${target.resource} aborted by the caller`,
    { cause },
  );
}
