import type { VerificationSummary } from '../pullsecret/verification-summary.js';
import { PullSecretError } from '../errors/index.js';
import type { RegistryResult, VerificationReport } from './verifier.js';

/** `verification.mode`: off (no check), warn (write, report), enforce (refused credentials are not written). */
export type VerificationMode = 'off' | 'warn' | 'enforce';
export const VERIFICATION_MODES = ['off', 'warn', 'enforce'] as const;

/** What a reconcile reports about the check (status `data.registryVerification`). */
export type { VerificationSummary } from '../pullsecret/verification-summary.js';

/** The summary of a report, for the status. */
export function summarize(
  mode: Exclude<VerificationMode, 'off'>,
  report: VerificationReport,
): VerificationSummary {
  return { mode, results: Object.fromEntries(report.results.map((r) => [r.registry, r.outcome])) };
}

/** `registry (detail)` of each result with `outcome`, joined for a message. */
function named(report: VerificationReport, outcome: RegistryResult['outcome']): string | undefined {
  const found = report.results.filter((r) => r.outcome === outcome);
  return found.length === 0 ? undefined : found.map((r) => `${r.registry} (${r.detail})`).join(', ');
}

/**
 * One line naming the registries that did not accept (for a warning and the status message); undefined when all
 * did.
 */
export function problemsOf(report: VerificationReport): string | undefined {
  const parts = [];
  const rejected = named(report, 'rejected');
  const unreachable = named(report, 'unreachable');
  if (rejected !== undefined) parts.push(`refused by ${rejected}`);
  if (unreachable !== undefined) parts.push(`not checked, unreachable: ${unreachable}`);
  return parts.length === 0 ? undefined : parts.join('; ');
}

/**
 * The `enforce` verdict: throws when a registry refused the credentials (CREDENTIALS_REJECTED, not
 * retried: the pull secret must change) or, otherwise, when one could not be reached
 * (REGISTRY_UNREACHABLE, retried). Messages name registries and HTTP statuses, never a credential.
 */
export function enforce(report: VerificationReport): void {
  const rejected = named(report, 'rejected');
  if (rejected !== undefined) {
    throw new PullSecretError(
      'CREDENTIALS_REJECTED',
      `registry refused the pull secret's credentials: ${rejected}; the pull secret was not written`,
    );
  }
  const unreachable = named(report, 'unreachable');
  if (unreachable !== undefined) {
    throw new PullSecretError(
      'REGISTRY_UNREACHABLE',
      `registry could not be reached to verify the pull secret's credentials: ${unreachable}; will retry`,
    );
  }
}
