/** The verdict of one preflight check. `warn` does not fail the run; `skip` means "not reached". */
export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip';

/** One line of the preflight report. */
export interface CheckResult {
  /** Stable id for scripts, e.g. `credentials`, `api`, `permission:secretmanager.secrets.get`. */
  id: string;
  /** Short name shown to the operator. */
  title: string;
  status: CheckStatus;
  /** What was found; never credential bytes. */
  detail: string;
  /** Commands (mostly `gcloud`) that fix a failed or doubtful check, in the order to run them. */
  fix: string[];
}

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
