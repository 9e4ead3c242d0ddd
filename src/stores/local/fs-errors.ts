import { PullSecretError } from '../../errors/index.js';

/** Transient conditions: another attempt (after space is freed, a device recovers, fds are released) may work. */
const TRANSIENT = new Set([
  'ENOSPC',
  'EDQUOT',
  'EIO',
  'EAGAIN',
  'EBUSY',
  'EMFILE',
  'ENFILE',
  'ETIMEDOUT',
  'ESTALE',
  'EINTR',
  'ENOMEM',
]);
const DENIED = new Set(['EACCES', 'EPERM']);

/** True for a filesystem error another attempt may get past (a full disk, a busy device, too many open files). */
export function isTransientFsError(err: unknown): boolean {
  const code = errnoCode(err);
  return code !== undefined && TRANSIENT.has(code);
}

/** The `code` of a Node system error, if it has one. */
export function errnoCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  const { code } = err;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Classifies a filesystem error at the store's edge, so callers never see a raw Node error.
 * `action` and `path` make the message actionable (`cannot write /x/y.json: EACCES ...`).
 * Paths and ids are not secret; payload bytes never reach this function.
 */
export function classifyFsError(err: unknown, action: string, path: string): PullSecretError {
  if (err instanceof PullSecretError) return err;
  const code = errnoCode(err);
  if (code === 'ABORT_ERR' || (err instanceof Error && err.name === 'AbortError')) {
    return new PullSecretError('ABORTED', 'operation aborted', { cause: err });
  }
  if (code !== undefined && DENIED.has(code)) {
    return new PullSecretError(
      'STORE_PERMISSION_DENIED',
      `local store: permission denied to ${action} ${path} (${code}); check the owner and mode of the ` +
        `store directory (LOCAL_STORE_DIR)`,
      { cause: err },
    );
  }
  if (code !== undefined && TRANSIENT.has(code)) {
    const hint =
      code === 'ENOSPC' || code === 'EDQUOT' ? 'no space left on the device' : 'transient filesystem error';
    return new PullSecretError(
      'STORE_UNAVAILABLE',
      `local store: cannot ${action} ${path} (${code}: ${hint})`,
      { cause: err },
    );
  }
  if (code === 'EROFS') {
    return new PullSecretError(
      'STORE_FAILED',
      `local store: cannot ${action} ${path} (EROFS: read-only filesystem); point LOCAL_STORE_DIR at a ` +
        `writable directory`,
      { cause: err },
    );
  }
  if (code === 'ENOTDIR' || code === 'EISDIR' || code === 'ELOOP' || code === 'ENAMETOOLONG') {
    return new PullSecretError(
      'STORE_FAILED',
      `local store: cannot ${action} ${path} (${code}); check that LOCAL_STORE_DIR is a directory`,
      { cause: err },
    );
  }
  return new PullSecretError(
    'STORE_FAILED',
    `local store: cannot ${action} ${path}${code === undefined ? '' : ` (${code})`}`,
    { cause: err },
  );
}
