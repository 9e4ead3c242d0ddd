import type { CheckResult, PreflightReport } from './types.js';

const LABELS: Readonly<Record<CheckResult['status'], string>> = { pass: 'PASS', warn: 'WARN', fail: 'FAIL', skip: 'SKIP' };

/**
 * The report as text: a header, one line per check (`PASS  title  detail`), each fix indented
 * under its check, and a count. Stable wording: the docs and tests quote it.
 */
export function formatReport(report: PreflightReport): string {
  const width = Math.max(...report.checks.map((c) => c.title.length));
  const lines = [`Preflight for project ${report.project} as ${report.serviceAccount} (permissions tested on ${report.resource})`];
  for (const check of report.checks) {
    lines.push(`${LABELS[check.status]}  ${check.title.padEnd(width)}  ${check.detail}`);
    for (const fix of check.fix) lines.push(`      fix: ${fix}`);
  }
  const count = (status: CheckResult['status']) => report.checks.filter((c) => c.status === status).length;
  lines.push(`${count('pass')} passed, ${count('fail')} failed, ${count('warn')} warnings, ${count('skip')} skipped`);
  return lines.join('\n');
}

/** The report as JSON, for scripts. */
export function reportJson(report: PreflightReport): string {
  return JSON.stringify(report, null, 2);
}
