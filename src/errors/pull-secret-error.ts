import { ERROR_CODES, type ErrorCode } from './codes.js';

/**
 * Base error of the service. The message is written for the operator and must never contain
 * credential bytes; `cause` may hold the original error for debugging and is never logged whole
 * (see `describeError`).
 */
export class PullSecretError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly exitCode: 1 | 2;
  /** The server's own wait before a retry (HTTP `Retry-After`), in ms; `withRetry` waits at least this long. */
  readonly retryAfterMs?: number;

  constructor(
    code: ErrorCode,
    message: string,
    options: { cause?: unknown; retryable?: boolean; retryAfterMs?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PullSecretError';
    this.code = code;
    this.retryable = options.retryable ?? ERROR_CODES[code].retryable;
    this.exitCode = ERROR_CODES[code].exitCode;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}

/** True when `err` is a PullSecretError that is worth retrying. */
export function isRetryable(err: unknown): boolean {
  return err instanceof PullSecretError && err.retryable;
}

/**
 * Turns anything thrown into a PullSecretError. Unknown errors become INTERNAL with a generic
 * message: their text may come from a parser or an SDK that quotes its input, so it is not repeated.
 */
export function toPullSecretError(err: unknown): PullSecretError {
  if (err instanceof PullSecretError) return err;
  if (err instanceof Error && err.name === 'AbortError') {
    return new PullSecretError('ABORTED', 'operation aborted', { cause: err });
  }
  return new PullSecretError('INTERNAL', 'unexpected internal error', { cause: err });
}

/** Fields safe to log for an error: code, message and retryability; never the cause's text. */
export function describeError(err: unknown): { error_code: string; error: string; retryable: boolean } {
  const e = toPullSecretError(err);
  return { error_code: e.code, error: e.message, retryable: e.retryable };
}
