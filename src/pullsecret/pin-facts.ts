/**
 * A rollback pin the reconcile served (docs/retention.md, "Rollback and pin"), in the status and,
 * from the Job's report, in Job mode: names, never content.
 */
export interface PinFacts {
  /** The version whose content was restored. */
  sourceVersion: string;
  /** The version the rollback wrote. */
  version?: string;
  by: string;
  at: string;
  reason?: string;
  expiresAt?: string;
}
