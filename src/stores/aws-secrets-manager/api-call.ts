import { PullSecretError } from '../../errors/index.js';
import { timedCall, type TimedCallOptions } from '../timed-call.js';
import { awsAbortedError, awsErrorName, callCode, classifyAwsError, type AwsCallTarget } from './errors.js';

/** Per-call settings of one Secrets Manager request. */
export type AwsApiCallOptions = TimedCallOptions;

/** The outcome of a call whose listed AWS error names are answers, not failures. */
type AwsExpected<T, C extends string> = { ok: true; value: T } | { ok: false; code: C; error: unknown };

/**
 * Makes one request through `run` (which passes the given signal to `client.send` as its
 * `abortSignal`) with the call's deadline, and reports it to `onApiCall` (`timedCall`). The SDK's
 * own retries are off (`maxAttempts: 1`, see sdk-client.ts): the caller retries step by step.
 * Error names listed in `expected` are returned as `{ ok: false }`.
 *
 * @throws PullSecretError: ABORTED when the caller's signal aborted, STORE_TIMEOUT past the
 *   deadline, otherwise the classified SDK error.
 */
export async function awsCallExpecting<T, C extends string>(
  target: AwsCallTarget,
  options: AwsApiCallOptions,
  expected: readonly C[],
  run: (abortSignal: AbortSignal) => Promise<T>,
): Promise<AwsExpected<T, C>> {
  const names = {
    method: target.method,
    codeOf: callCode,
    timeoutCode: 'TimeoutError',
    aborted: (cause: unknown) => awsAbortedError(target, cause),
    timeout: (cause: unknown) =>
      new PullSecretError(
        'STORE_TIMEOUT',
        `AWS Secrets Manager ${target.method} failed for ${target.resource}: no answer within ` +
          `${options.timeoutMs} ms (AWS_SECRETS_CALL_TIMEOUT_MS); retrying.`,
        { cause },
      ),
  };
  try {
    return { ok: true, value: await timedCall(options, names, run) };
  } catch (err) {
    if (err instanceof PullSecretError) throw err;
    const name = awsErrorName(err);
    const answer = expected.find((c) => c === name);
    if (answer !== undefined) return { ok: false, code: answer, error: err };
    throw classifyAwsError(err, target);
  }
}

/** `awsCallExpecting` with no expected answers: every failure throws. */
export async function awsCall<T>(
  target: AwsCallTarget,
  options: AwsApiCallOptions,
  run: (abortSignal: AbortSignal) => Promise<T>,
): Promise<T> {
  const result = await awsCallExpecting<T, never>(target, options, [], run);
  if (result.ok) return result.value;
  throw new PullSecretError('INTERNAL', `AWS Secrets Manager ${target.method} returned an unexpected answer`);
}
