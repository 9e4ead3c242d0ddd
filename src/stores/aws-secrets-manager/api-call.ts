import { PullSecretError } from '../../errors/index.js';
import type { ApiCallHook } from '../factory.js';
import { awsAbortedError, awsErrorName, callCode, classifyAwsError, type AwsCallTarget } from './errors.js';

/** Per-call settings of one Secrets Manager request. */
export interface AwsApiCallOptions {
  signal?: AbortSignal | undefined;
  /** Deadline of this call in milliseconds. */
  timeoutMs: number;
  onApiCall?: ApiCallHook | undefined;
}

/** The outcome of a call whose listed AWS error names are answers, not failures. */
export type AwsExpected<T, C extends string> = { ok: true; value: T } | { ok: false; code: C; error: unknown };

function report(hook: ApiCallHook | undefined, method: string, code: string, started: number): void {
  if (hook === undefined) return;
  try {
    hook(method, code, performance.now() - started);
  } catch {
    // A metrics hook must never turn a store call into a failure.
  }
}

/**
 * Makes one request through `run` (which passes the given signal to `client.send` as its
 * `abortSignal`) with the call's deadline, and reports it to `onApiCall`. The SDK's own retries are
 * off (`maxAttempts: 1`, see sdk-client.ts): the caller retries step by step. The deadline and the
 * caller's signal abort one controller, linked by hand (no `AbortSignal.any`, which keeps a
 * reference per call on Node 20). Error names listed in `expected` are returned as `{ ok: false }`.
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
  const { signal } = options;
  if (signal?.aborted) throw awsAbortedError(target, signal.reason);
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('deadline exceeded'));
  }, options.timeoutMs);
  const started = performance.now();
  let code = 'OK';
  try {
    return { ok: true, value: await run(controller.signal) };
  } catch (err) {
    if (signal?.aborted) {
      code = 'CANCELLED';
      throw awsAbortedError(target, signal.reason);
    }
    if (timedOut) {
      code = 'TimeoutError';
      throw new PullSecretError('STORE_TIMEOUT', `AWS Secrets Manager ${target.method} failed for ${target.resource}: no answer within ${options.timeoutMs} ms (AWS_SECRETS_CALL_TIMEOUT_MS); retrying.`, {
        cause: err,
      });
    }
    code = callCode(err);
    const name = awsErrorName(err);
    const answer = expected.find((c) => c === name);
    if (answer !== undefined) return { ok: false, code: answer, error: err };
    throw classifyAwsError(err, target);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    report(options.onApiCall, target.method, code, started);
  }
}

/** `awsCallExpecting` with no expected answers: every failure throws. */
export async function awsCall<T>(target: AwsCallTarget, options: AwsApiCallOptions, run: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
  const result = await awsCallExpecting<T, never>(target, options, [], run);
  if (result.ok) return result.value;
  throw new PullSecretError('INTERNAL', `AWS Secrets Manager ${target.method} returned an unexpected answer`);
}
