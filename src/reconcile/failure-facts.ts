import { PullSecretError, toPullSecretError } from '../errors/index.js';
import type { ReconcileFacts } from './steps.js';

/**
 * A reconcile's failure with the facts gathered before it: what a step found before it refused (the
 * registry verification's results) and, when nothing was written, the version still served. The failed
 * outcome's status and the Job's failure result carry them (docs/verification.md). It is the
 * PullSecretError it wraps (same code, message, retryability, `Retry-After`), so every caller that
 * handles failures handles it as before; only those that report read `factsOf`.
 */
class ReconcileFailure extends PullSecretError {
  constructor(
    error: PullSecretError,
    readonly facts: Readonly<ReconcileFacts>,
  ) {
    super(error.code, error.message, {
      cause: error.cause,
      retryable: error.retryable,
      ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    });
  }
}

/**
 * `err` carrying `facts` beside those it carries already (its own win: they were found later); `err`
 * unchanged when `facts` has none.
 */
export function withFacts(err: unknown, facts: ReconcileFacts): unknown {
  const defined = Object.entries(facts).filter(([, value]) => value !== undefined);
  if (defined.length === 0) return err;
  const error = toPullSecretError(err);
  return new ReconcileFailure(error, { ...Object.fromEntries(defined), ...factsOf(error) });
}

/** The facts a failed reconcile carries (none for any other error). */
export function factsOf(err: unknown): Readonly<ReconcileFacts> {
  return err instanceof ReconcileFailure ? err.facts : {};
}
