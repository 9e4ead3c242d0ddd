import type { ApiCallHook } from '../factory.js';
import { abortedError, classifyAzureError, httpStatus, statusName, timeoutError, type CallTarget } from './errors.js';

/** Per-call settings of one Key Vault operation. */
export interface ApiCallOptions {
  signal?: AbortSignal | undefined;
  /** Deadline of this call in milliseconds. */
  timeoutMs: number;
  onApiCall?: ApiCallHook | undefined;
}

/** The outcome of a call whose listed HTTP statuses are answers, not failures. */
export type Expected<T> = { ok: true; value: T } | { ok: false; status: number; error: unknown };

function report(hook: ApiCallHook | undefined, method: string, code: string, started: number): void {
  if (hook === undefined) return;
  try {
    hook(method, code, performance.now() - started);
  } catch {
    // A metrics hook must never turn a store call into a failure.
  }
}

/**
 * Makes one SDK call through `run` with its own `AbortSignal`: aborted when the caller's signal
 * aborts (ABORTED) or the deadline passes (STORE_TIMEOUT); the SDK's pipeline cancels the HTTP
 * request on the wire. HTTP statuses listed in `expected` (or matched by it) are returned as
 * `{ ok: false }`; every other failure is classified. Reports the call to `onApiCall`.
 *
 * @throws PullSecretError: ABORTED, STORE_TIMEOUT, or the classified SDK error.
 */
export async function callExpecting<T>(
  target: CallTarget,
  options: ApiCallOptions,
  expected: readonly number[] | ((err: unknown) => boolean),
  run: (abortSignal: AbortSignal) => Promise<T>,
): Promise<Expected<T>> {
  const { signal } = options;
  if (signal?.aborted) throw abortedError(target, signal.reason);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  // Linked by hand (not AbortSignal.any) so a long-lived caller signal keeps no reference per call.
  const onAbort = (): void => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const started = performance.now();
  let code = 'OK';
  try {
    return { ok: true, value: await run(controller.signal) };
  } catch (err) {
    if (signal?.aborted) {
      code = 'CANCELLED';
      throw abortedError(target, signal.reason);
    }
    if (timedOut) {
      code = 'TIMEOUT';
      throw timeoutError(target, options.timeoutMs);
    }
    const status = httpStatus(err);
    code = statusName(status);
    const answer = typeof expected === 'function' ? expected(err) : status !== undefined && expected.includes(status);
    if (answer && status !== undefined) return { ok: false, status, error: err };
    throw classifyAzureError(err, target);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    report(options.onApiCall, target.method, code, started);
  }
}

/** `callExpecting` with no expected status: every failure throws. */
export async function call<T>(target: CallTarget, options: ApiCallOptions, run: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
  const result = await callExpecting(target, options, [], run);
  if (result.ok) return result.value;
  throw classifyAzureError(result.error, target);
}
