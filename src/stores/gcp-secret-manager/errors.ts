import { Status } from 'google-gax';
import { PullSecretError, type ErrorCode } from '../../errors/index.js';

/**
 * Classification of Secret Manager SDK / gRPC errors into `PullSecretError` (each store
 * classifies its SDK's errors at the edge; the pipeline only looks at `retryable`).
 */

/** The Secret Manager RPCs this store makes. */
export type GcpMethod =
  | 'GetSecret'
  | 'CreateSecret'
  | 'UpdateSecret'
  | 'DeleteSecret'
  | 'AddSecretVersion'
  | 'AccessSecretVersion'
  | 'ListSecretVersions'
  | 'EnableSecretVersion'
  | 'DisableSecretVersion'
  | 'DestroySecretVersion';

/** A gRPC status code name (google.rpc.Code, as gax names it), or `UNKNOWN` for anything that is not a gRPC status. */
export type GrpcCodeName = keyof typeof Status;

/** The IAM permission each RPC needs and the smallest predefined role holding it. */
const PERMISSIONS: Record<GcpMethod, { permission: string; role: string }> = {
  GetSecret: { permission: 'secretmanager.secrets.get', role: 'roles/secretmanager.viewer' },
  CreateSecret: { permission: 'secretmanager.secrets.create', role: 'roles/secretmanager.admin' },
  DeleteSecret: { permission: 'secretmanager.secrets.delete', role: 'roles/secretmanager.admin' },
  UpdateSecret: {
    permission: 'secretmanager.secrets.update',
    role: 'a custom role, or roles/secretmanager.admin',
  },
  AddSecretVersion: {
    permission: 'secretmanager.versions.add',
    role: 'roles/secretmanager.secretVersionAdder',
  },
  AccessSecretVersion: {
    permission: 'secretmanager.versions.access',
    role: 'roles/secretmanager.secretAccessor',
  },
  ListSecretVersions: { permission: 'secretmanager.versions.list', role: 'roles/secretmanager.viewer' },
  EnableSecretVersion: {
    permission: 'secretmanager.versions.enable',
    role: 'roles/secretmanager.secretVersionManager',
  },
  DisableSecretVersion: {
    permission: 'secretmanager.versions.disable',
    role: 'roles/secretmanager.secretVersionManager',
  },
  DestroySecretVersion: {
    permission: 'secretmanager.versions.destroy',
    role: 'roles/secretmanager.secretVersionManager',
  },
};

/** Node socket error codes: the connection broke before gRPC could report a status. */
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
]);
const SOCKET_ERROR_TEXT = new RegExp(`\\b(${[...SOCKET_ERRORS].join('|')})\\b`);

/** The google-auth-library message when no Application Default Credentials exist. */
const NO_CREDENTIALS_TEXT = /Could not load the default credentials|Could not refresh access token/;

/** The gRPC status name of an SDK error (`UNKNOWN` when it carries none). */
export function grpcCodeName(err: unknown): GrpcCodeName {
  const code = (err as { code?: unknown } | null)?.code;
  const name: unknown = typeof code === 'number' ? Status[code] : undefined;
  return typeof name === 'string' ? (name as GrpcCodeName) : 'UNKNOWN';
}

/**
 * The server's status text, bounded and reduced to printable ASCII so it can neither flood nor
 * forge a log line. gax prefixes messages with `<number> <NAME>: `, which is dropped.
 */
export function serverDetail(err: unknown): string | undefined {
  const e = err as { details?: unknown; message?: unknown } | null;
  const raw =
    typeof e?.details === 'string' && e.details !== ''
      ? e.details
      : typeof e?.message === 'string'
        ? e.message
        : '';
  const text = raw
    .replace(/^\d+ [A-Z_]+: /, '')
    .replace(/[^\x20-\x7e]/g, '?')
    .trim();
  if (text === '') return undefined;
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function socketErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && SOCKET_ERRORS.has(code)) return code;
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? SOCKET_ERROR_TEXT.exec(message)?.[1] : undefined;
}

/** Where a failed call was aimed, for the message: a resource path, never payload bytes. */
export interface CallTarget {
  method: GcpMethod;
  /** Resource path, e.g. `projects/p/secrets/s` or `.../versions/3`. */
  resource: string;
}

/** Error code and advice per gRPC status; the advice is one sentence for the operator. */
function adviceFor(
  codeName: GrpcCodeName,
  method: GcpMethod,
  socket: string | undefined,
): [ErrorCode, string] {
  switch (codeName) {
    case 'UNAVAILABLE':
      return ['STORE_UNAVAILABLE', 'The service or the network is unavailable; retrying.'];
    case 'CANCELLED':
      return ['STORE_UNAVAILABLE', 'The call was cancelled on its way; retrying.'];
    case 'DEADLINE_EXCEEDED':
      return [
        'STORE_TIMEOUT',
        'The call did not finish within its deadline (GCP_CALL_TIMEOUT_MS); retrying.',
      ];
    case 'RESOURCE_EXHAUSTED':
      return ['STORE_QUOTA_EXCEEDED', 'A Secret Manager quota or rate limit was hit; retrying with backoff.'];
    case 'INTERNAL':
      return ['STORE_INTERNAL', 'The service reported an internal error; retrying.'];
    case 'UNKNOWN':
      return socket === undefined
        ? ['STORE_INTERNAL', 'The call failed without a reason; retrying.']
        : ['STORE_UNAVAILABLE', `The connection failed (${socket}); retrying.`];
    case 'ABORTED':
      return ['STORE_CONFLICT', 'A concurrent change conflicted with this call; re-reading and retrying.'];
    case 'ALREADY_EXISTS':
      return ['STORE_CONFLICT', 'The resource was created concurrently; re-reading and retrying.'];
    case 'PERMISSION_DENIED': {
      const { permission, role } = PERMISSIONS[method];
      return [
        'STORE_PERMISSION_DENIED',
        `Grant the workload's Google service account the IAM permission ${permission} on the secret or ` +
          `the project (e.g. through ${role}).` +
          (method === 'UpdateSecret'
            ? ' It is needed only for the write intent: without it, set SECRET_MANAGER_WRITE_INTENT=false.'
            : ''),
      ];
    }
    case 'UNAUTHENTICATED':
      return [
        'STORE_UNAUTHENTICATED',
        'The credentials were missing or rejected: on GKE check the Workload Identity binding of the ' +
          'Kubernetes service account; ' +
          'locally run `gcloud auth application-default login`.',
      ];
    case 'INVALID_ARGUMENT':
      return [
        'STORE_INVALID_REQUEST',
        'The request was rejected as invalid; check the secret name, the labels and the payload size (64 KiB at most).',
      ];
    case 'NOT_FOUND':
      return [
        'SECRET_NOT_FOUND',
        'The secret or version does not exist; check GCP_PROJECT_ID and the secret name.',
      ];
    case 'FAILED_PRECONDITION':
      return ['VERSION_NOT_ENABLED', 'The secret version is not ENABLED (it is disabled or destroyed).'];
    default:
      return ['STORE_FAILED', 'The call failed permanently.'];
  }
}

/** Errors without a gRPC status: socket failures before a status existed, missing credentials, SDK misuse. */
function classifyNonGrpc(err: unknown, where: string): PullSecretError {
  const socket = socketErrorCode(err);
  if (socket !== undefined) {
    return new PullSecretError(
      'STORE_UNAVAILABLE',
      `${where}: ${socket}. The endpoint could not be reached; retrying.`,
      { cause: err },
    );
  }
  const message = (err as { message?: unknown } | null)?.message;
  if (typeof message === 'string' && NO_CREDENTIALS_TEXT.test(message)) {
    return new PullSecretError(
      'STORE_UNAUTHENTICATED',
      `${where}: no usable Google credentials. On GKE bind the Kubernetes service account to a Google ` +
        `service account with ` +
        'Workload Identity; locally run `gcloud auth application-default login`.',
      { cause: err },
    );
  }
  return new PullSecretError('STORE_FAILED', `${where}: unexpected client error.`, { cause: err });
}

/**
 * Turns an SDK error into a `PullSecretError` whose message names the RPC, the resource and the
 * gRPC code, says what to do, and never carries request payloads: the server's own text is
 * repeated (bounded) except for `AddSecretVersion`, the one request that holds secret bytes.
 */
export function classifyGcpError(err: unknown, target: CallTarget): PullSecretError {
  if (err instanceof PullSecretError) return err;
  const where = `GCP Secret Manager ${target.method} failed for ${target.resource}`;
  if (typeof (err as { code?: unknown } | null)?.code !== 'number') return classifyNonGrpc(err, where);
  const codeName = grpcCodeName(err);
  const [code, advice] = adviceFor(codeName, target.method, socketErrorCode(err));
  const detail = target.method === 'AddSecretVersion' ? undefined : serverDetail(err);
  return new PullSecretError(
    code,
    `${where}: ${codeName}${detail === undefined ? '' : ` (${detail})`}. ${advice}`,
    { cause: err },
  );
}

/** The error for a call the caller aborted through its `AbortSignal`. */
export function abortedError(target: CallTarget, cause: unknown): PullSecretError {
  return new PullSecretError(
    'ABORTED',
    `GCP Secret Manager ${target.method} for ${target.resource} aborted by the caller`,
    { cause },
  );
}
