import { PullSecretError, type ErrorCode } from '../../errors/index.js';
import { trimServerText } from '../../errors/server-text.js';
import { credentialAdvice, UNTRUSTED_ADVICE, untrustedCertificate } from './credential-advice.js';

/**
 * Classification of Key Vault SDK errors (`RestError` from the HTTP pipeline, credential errors from
 * `@azure/identity`) into `PullSecretError`: each store classifies at its edge, the pipeline looks
 * only at `retryable`.
 */

/** The Key Vault operations this store makes (REST operation names, also the metric's `method`). */
export type AzureMethod =
  | 'GetSecret'
  | 'SetSecret'
  | 'UpdateSecret'
  | 'GetSecretVersions'
  | 'DeleteSecret'
  | 'GetDeletedSecret'
  | 'RecoverDeletedSecret';

/** Where a failed call was aimed, for the message: the secret's URL, never payload bytes. */
export interface CallTarget {
  method: AzureMethod;
  resource: string;
}

/** The longest server-requested wait honoured; a longer `Retry-After` is cut to this. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** The data-plane right each operation needs, and the built-in role that holds it. */
const RIGHTS: Record<AzureMethod, string> = {
  GetSecret: 'secrets/get',
  SetSecret: 'secrets/set',
  UpdateSecret: 'secrets/set',
  GetSecretVersions: 'secrets/list',
  DeleteSecret: 'secrets/delete',
  GetDeletedSecret:
    'secrets/get (on deleted secrets: the "Key Vault Secrets Officer" role or the access policy permission get)',
  RecoverDeletedSecret: 'secrets/recover',
};

/** Errors of `@azure/identity`: no credential found, or the token endpoint refused it. */
const CREDENTIAL_ERRORS = new Set([
  'CredentialUnavailableError',
  'AggregateAuthenticationError',
  'AuthenticationError',
  'AuthenticationRequiredError',
]);

const SOCKET_ERRORS = [
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
];
const SOCKET_TEXT = new RegExp(`\\b(${SOCKET_ERRORS.join('|')})\\b|socket hang up`);

interface RestLike {
  name?: unknown;
  statusCode?: unknown;
  code?: unknown;
  message?: unknown;
  details?: { error?: { code?: unknown; innerError?: { code?: unknown } } };
  response?: { headers?: { get(name: string): string | undefined } };
}

/** The HTTP status of an SDK error, or undefined when the request never got an answer. */
export function httpStatus(err: unknown): number | undefined {
  const status = (err as RestLike | null)?.statusCode;
  return typeof status === 'number' && status > 0 ? status : undefined;
}

/** Key Vault's answer to reading a disabled version: 403 with the inner code `SecretDisabled`. */
export function isDisabledAnswer(err: unknown): boolean {
  const e = err as RestLike | null;
  if (httpStatus(err) !== 403) return false;
  const inner = e?.details?.error?.innerError?.code;
  return (
    inner === 'SecretDisabled' ||
    (typeof e?.message === 'string' && /not allowed on a disabled secret/i.test(e.message))
  );
}

/** The server's `Retry-After` (seconds or an HTTP date) in ms, bounded by MAX_RETRY_AFTER_MS. */
export function retryAfterMs(err: unknown, now = Date.now()): number | undefined {
  const raw = (err as RestLike | null)?.response?.headers?.get('retry-after');
  if (raw === undefined || raw.trim() === '') return undefined;
  const seconds = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) * 1000 : Date.parse(raw) - now;
  return Number.isFinite(seconds) ? Math.min(MAX_RETRY_AFTER_MS, Math.max(0, seconds)) : undefined;
}

/** The metric's status name of a finished call (`OK`, `NOT_FOUND`, ...). */
export function statusName(status: number | undefined): string {
  switch (status) {
    case undefined:
      return 'UNAVAILABLE';
    case 401:
      return 'UNAUTHORIZED';
    case 403:
      return 'FORBIDDEN';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'CONFLICT';
    case 429:
      return 'TOO_MANY_REQUESTS';
    default:
      if (status < 300) return 'OK';
      if (status >= 500) return 'UNAVAILABLE';
      return 'BAD_REQUEST';
  }
}

function adviceFor(status: number, method: AzureMethod): [ErrorCode, string] {
  if (status === 429)
    return [
      'STORE_QUOTA_EXCEEDED',
      "Key Vault throttled the call (the vault's service limit); retrying after the server's Retry-After.",
    ];
  if (status === 408 || status >= 500)
    return ['STORE_UNAVAILABLE', 'Key Vault or the network is unavailable; retrying.'];
  if (status === 401) {
    return [
      'STORE_UNAUTHENTICATED',
      'The token was missing or rejected: check the workload identity of the pod (AZURE_CLIENT_ID, ' +
        'AZURE_TENANT_ID, the federated credential; docs/azure-identity.md).',
    ];
  }
  if (status === 403) {
    return [
      'STORE_PERMISSION_DENIED',
      `Forbidden: grant the adapter's identity ${RIGHTS[method]} on the vault, e.g. \`az role assignment ` +
        `create --role "Key Vault Secrets Officer" --assignee <object-id> --scope <vault resource id>\` ` +
        `(RBAC vaults), or an access policy with get, list, set, delete and recover ` +
        `(docs/azure-identity.md). A vault firewall refusing this network also answers Forbidden.`,
    ];
  }
  if (status === 404)
    return [
      'SECRET_NOT_FOUND',
      'The secret or version does not exist; check AZURE_KEY_VAULT_URL and the secret name.',
    ];
  if (status === 409)
    return ['STORE_CONFLICT', 'The secret is being deleted or recovered; re-reading and retrying.'];
  if (status === 413)
    return [
      'STORE_INVALID_REQUEST',
      'The request is too large: Key Vault holds at most 25 KB per secret value.',
    ];
  return [
    'STORE_INVALID_REQUEST',
    'The request was rejected as invalid; check the secret name, the tags (at most 15) and the value ' +
      'size (25 KB at most).',
  ];
}

/**
 * Turns an SDK error into a `PullSecretError` whose message names the operation, the secret and the
 * HTTP status and says what to do. The server's own text is kept (trimmed) except for `SetSecret`,
 * the one request that holds secret bytes; a 429 carries the server's `Retry-After` as `retryAfterMs`.
 */
export function classifyAzureError(err: unknown, target: CallTarget): PullSecretError {
  if (err instanceof PullSecretError) return err;
  const where = `Azure Key Vault ${target.method} failed for ${target.resource}`;
  const e = err as RestLike | null;
  const status = httpStatus(err);
  const name = typeof e?.name === 'string' ? e.name : '';
  // A certificate no trusted CA vouches for (vault or token endpoint): configuration, not a passing fault.
  const untrusted = untrustedCertificate(err);
  if (untrusted !== undefined)
    return new PullSecretError(
      'CONFIG_INVALID',
      `${where}: TLS trust failure (${untrusted}): ${UNTRUSTED_ADVICE}`,
      { cause: err },
    );
  // Credential errors come from the token endpoint (their statusCode is Entra ID's, not the vault's).
  if (CREDENTIAL_ERRORS.has(name)) {
    if (status !== undefined && (status === 429 || status >= 500)) {
      return new PullSecretError(
        'STORE_UNAVAILABLE',
        `${where}: the token endpoint answered ${status} (${name}); retrying.`,
        { cause: err },
      );
    }
    return new PullSecretError('STORE_UNAUTHENTICATED', `${where}: ${credentialAdvice(err, name)}`, {
      cause: err,
    });
  }
  if (status === undefined) {
    const message = typeof e?.message === 'string' ? e.message : '';
    const socket =
      SOCKET_TEXT.exec(message)?.[0] ??
      (typeof e?.code === 'string' && SOCKET_ERRORS.includes(e.code) ? e.code : undefined);
    if (socket !== undefined || e?.code === 'REQUEST_SEND_ERROR') {
      return new PullSecretError(
        'STORE_UNAVAILABLE',
        `${where}: ${socket ?? 'the request could not be sent'}. The vault could not be reached; retrying.`,
        { cause: err },
      );
    }
    return new PullSecretError('STORE_FAILED', `${where}: unexpected client error.`, { cause: err });
  }
  const [code, advice] = adviceFor(status, target.method);
  const serverCode = typeof e?.code === 'string' ? trimServerText(e.code, 60) : undefined;
  const detail =
    target.method === 'SetSecret' || typeof e?.message !== 'string' ? undefined : trimServerText(e.message);
  const answer = [String(status), serverCode].filter(Boolean).join(' ');
  const after = status === 429 ? retryAfterMs(err) : undefined;
  return new PullSecretError(
    code,
    `${where}: ${answer}${detail === undefined || detail === '' ? '' : ` (${detail})`}. ${advice}`,
    {
      cause: err,
      ...(after === undefined ? {} : { retryAfterMs: after }),
    },
  );
}

/** The error for a call the caller aborted through its `AbortSignal`. */
export function abortedError(target: CallTarget, cause: unknown): PullSecretError {
  return new PullSecretError(
    'ABORTED',
    `Azure Key Vault ${target.method} for ${target.resource} aborted by the caller`,
    { cause },
  );
}

/** The error for a call that did not finish within AZURE_KEY_VAULT_CALL_TIMEOUT_MS. */
export function timeoutError(target: CallTarget, timeoutMs: number): PullSecretError {
  return new PullSecretError(
    'STORE_TIMEOUT',
    `Azure Key Vault ${target.method} for ${target.resource} did not finish within ${timeoutMs} ms ` +
      `(AZURE_KEY_VAULT_CALL_TIMEOUT_MS); retrying.`,
  );
}
