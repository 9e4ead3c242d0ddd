import { renderTable } from '../util/table.js';

/** One line of a store's preflight report. `warn` does not fail the run; `skip` means "not reached". */
export interface PreflightCheck {
  title: string;
  status: 'pass' | 'warn' | 'fail' | 'skip';
  /** What was found; never credential bytes. */
  detail: string;
  /** Commands that fix a failed or doubtful check, in the order to run them. */
  fix: string[];
}

/** A preflight check with a stable id for scripts, e.g. `credentials`, `permission:secretmanager.secrets.get`. */
export interface CheckResult extends PreflightCheck {
  id: string;
}

const LABELS: Readonly<Record<PreflightCheck['status'], string>> = {
  pass: 'PASS',
  warn: 'WARN',
  fail: 'FAIL',
  skip: 'SKIP',
};

/**
 * A preflight report as text, the same for every store: `header`, one line per check
 * (`PASS  title  detail`), each fix indented under its check, and a count. Stable wording: the docs
 * and tests quote it.
 */
export function formatChecks(header: string, checks: readonly PreflightCheck[]): string {
  const rows = renderTable(checks.map((c) => [LABELS[c.status], c.title, c.detail])).split('\n');
  const lines = [header];
  checks.forEach((check, i) => {
    lines.push(rows[i] ?? '');
    for (const fix of check.fix) lines.push(`      fix: ${fix}`);
  });
  const count = (status: PreflightCheck['status']) => checks.filter((c) => c.status === status).length;
  lines.push(
    `${count('pass')} passed, ${count('fail')} failed, ${count('warn')} warnings, ${count('skip')} skipped`,
  );
  return lines.join('\n');
}
