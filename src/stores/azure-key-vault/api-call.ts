import { PullSecretError } from '../../errors/index.js';
import { timedCall, type TimedCallOptions } from '../timed-call.js';
import {
  abortedError,
  classifyAzureError,
  httpStatus,
  statusName,
  timeoutError,
  type CallTarget,
} from './errors.js';

/** Per-call settings of one Key Vault operation. */
export type ApiCallOptions = TimedCallOptions;

/** The outcome of a call whose listed HTTP statuses are answers, not failures. */
type Expected<T> = { ok: true; value: T } | { ok: false; status: number; error: unknown };

/**
 * Makes one SDK call through `run` with the call's deadline and the caller's signal, and reports it
 * to `onApiCall` (`timedCall`); the SDK's pipeline cancels the HTTP request on the wire. HTTP
 * statuses listed in `expected` (or matched by it) are returned as `{ ok: false }`; every other
 * failure is classified.
 *
 * @throws PullSecretError: ABORTED, STORE_TIMEOUT, or the classified SDK error.
 */
export async function callExpecting<T>(
  target: CallTarget,
  options: ApiCallOptions,
  expected: readonly number[] | ((err: unknown) => boolean),
  run: (abortSignal: AbortSignal) => Promise<T>,
): Promise<Expected<T>> {
  const names = {
    method: target.method,
    codeOf: (err: unknown) => statusName(httpStatus(err)),
    timeoutCode: 'TIMEOUT',
    aborted: (cause: unknown) => abortedError(target, cause),
    timeout: () => timeoutError(target, options.timeoutMs),
  };
  try {
    return { ok: true, value: await timedCall(options, names, run) };
  } catch (err) {
    if (err instanceof PullSecretError) throw err;
    const status = httpStatus(err);
    const answer =
      typeof expected === 'function' ? expected(err) : status !== undefined && expected.includes(status);
    if (answer && status !== undefined) return { ok: false, status, error: err };
    throw classifyAzureError(err, target);
  }
}

/** `callExpecting` with no expected status: every failure throws. */
export async function call<T>(
  target: CallTarget,
  options: ApiCallOptions,
  run: (abortSignal: AbortSignal) => Promise<T>,
): Promise<T> {
  const result = await callExpecting(target, options, [], run);
  if (result.ok) return result.value;
  throw classifyAzureError(result.error, target);
}
