/**
 * What a registry verification of a pull secret found (docs/verification.md), in the words the status,
 * the Job's result file and its termination message use. Defined here, below the Kubernetes code that
 * reads a Job's report and the verification plug-in that produces it, so that both use one list.
 */

/** A registry login check's outcome for one `auths` key. */
export type VerificationOutcome = 'accepted' | 'rejected' | 'unreachable' | 'skipped';

export const VERIFICATION_OUTCOMES: readonly VerificationOutcome[] = [
  'accepted',
  'rejected',
  'unreachable',
  'skipped',
];

/** The verification of one pull secret: the mode it ran in and each registry's outcome by `auths` key. */
export interface VerificationSummary {
  mode: 'warn' | 'enforce';
  results: Record<string, VerificationOutcome>;
}
