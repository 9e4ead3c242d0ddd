import type { CheckResult } from '../../preflight-report.js';

export type { CheckResult };
/** The verdict of one preflight check. `warn` does not fail the run; `skip` means "not reached". */
export type CheckStatus = CheckResult['status'];

/** The whole run. */
export interface PreflightReport {
  project: string;
  serviceAccount: string;
  /** The secret resource the permissions were tested on. */
  resource: string;
  checks: CheckResult[];
  /** True when no check failed. */
  ok: boolean;
}
