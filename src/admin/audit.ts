import type { Logger } from '../observability/logger.js';
import type { TokenSlot } from './token-state.js';

/** What the admin API was asked to do. */
export type AdminAction =
  | 'get-cluster'
  | 'list-clusters'
  | 'reconcile'
  | 'rollback'
  | 'rollback-release'
  | 'transfer-check'
  | 'unknown';

/** One audit record: who (token slot, client address), what, on which cluster, with what result. */
export interface AuditRecord {
  action: AdminAction;
  clusterId?: string;
  /** `none` when no valid token was presented. */
  tokenSlot: TokenSlot | 'none';
  /**
   * `ok`, or why not: `unauthenticated`, `rate-limited`, `invalid`, `not-found`, `not-available`,
   * `refused` (a rollback the versions do not allow), `upstream-error`, `error`.
   */
  result: string;
  httpStatus: number;
  client: string;
}

/**
 * Writes one audit line per admin request (message `Admin action`, `audit: true`), refused ones
 * included. Holds no token byte: only which slot matched.
 */
export function writeAudit(logger: Logger, record: AuditRecord): void {
  logger.info(
    {
      audit: true,
      operation: 'admin-audit',
      action: record.action,
      cluster_id: record.clusterId,
      token_slot: record.tokenSlot,
      result: record.result,
      http_status: record.httpStatus,
      client: record.client,
    },
    'Admin action',
  );
}
