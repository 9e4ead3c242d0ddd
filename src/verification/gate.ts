import type { Logger } from '../observability/logger.js';
import type { ReconcileStep } from '../reconcile/steps.js';
import { withFacts } from '../reconcile/failure-facts.js';
import { enforce, problemsOf, summarize, type VerificationMode, type VerificationSummary } from './policy.js';
import type { RegistryVerifier } from './verifier.js';

/**
 * The check a reconcile runs before it promotes a new pull secret (content that differs from the
 * store's newest version; a no-op never gets here, so it makes no registry call).
 */
export class VerificationGate {
  constructor(
    readonly mode: Exclude<VerificationMode, 'off'>,
    readonly verifier: RegistryVerifier,
  ) {}

  /**
   * Checks `pullSecret` and applies the mode: `enforce` throws CREDENTIALS_REJECTED or
   * REGISTRY_UNREACHABLE (so nothing is written) carrying the summary (`factsOf`, for the failed status
   * and the Job's result); `warn` logs a warning and lets the write go on.
   * Resolves with the summary for the status.
   */
  async check(pullSecret: string, log: Logger, signal?: AbortSignal): Promise<VerificationSummary> {
    const started = performance.now();
    const report = await this.verifier.verify(pullSecret, signal);
    const fields = {
      operation: 'verify-registries',
      mode: this.mode,
      results: report.results.map((r) => ({
        registry: r.registry,
        outcome: r.outcome,
        detail: r.detail,
        cached: r.cached,
      })),
      round_trips: report.roundTrips,
      duration_ms: Math.round(performance.now() - started),
    };
    const problems = problemsOf(report);
    if (problems === undefined) log.info(fields, 'Registry verification passed');
    else log.warn(fields, `Registry verification: ${problems}`);
    const summary = summarize(this.mode, report);
    if (this.mode === 'enforce') {
      try {
        enforce(report);
      } catch (err) {
        throw withFacts(err, { verification: summary });
      }
    }
    return summary;
  }
}

/**
 * The reconcile step of registry verification (`verification.mode` warn or enforce): checks the
 * credentials only when a new pull secret would be promoted; in enforce mode a refusal stops the
 * reconcile before any write.
 */
export function verificationStep(gate: VerificationGate): ReconcileStep {
  return Object.freeze({
    async beforeWrite(ctx, payload) {
      return { verification: await gate.check(payload.toString('utf8'), ctx.log, ctx.signal) };
    },
  } satisfies ReconcileStep);
}
