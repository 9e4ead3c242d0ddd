import { formatChecks } from '../../preflight-report.js';
import type { PreflightReport } from './types.js';

/**
 * The report as text: a header, one line per check (`PASS  title  detail`), each fix indented
 * under its check, and a count. Stable wording: the docs and tests quote it.
 */
export function formatReport(report: PreflightReport): string {
  return formatChecks(
    `Preflight for project ${report.project} as ${report.serviceAccount} (permissions tested on ${report.resource})`,
    report.checks,
  );
}

/** The report as JSON, for scripts. */
export function reportJson(report: PreflightReport): string {
  return JSON.stringify(report, null, 2);
}
