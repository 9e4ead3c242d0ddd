import type { PullSecretError } from '../errors/index.js';
import type { ApiCallHook } from './factory.js';

/** Per-call settings of one backend call of an HTTP-based store (AWS, Azure). */
export interface TimedCallOptions {
  signal?: AbortSignal | undefined;
  /** Deadline of this call in milliseconds. */
  timeoutMs: number;
  onApiCall?: ApiCallHook | undefined;
}

/** How a store names what `timedCall` reports and throws. */
interface TimedCallNames {
  /** The backend's method name for metrics (`GetSecretValue`). */
  method: string;
  /** Status code name of a call that failed with `err` (metrics). */
  codeOf(err: unknown): string;
  /** Code name of a call past its deadline (metrics). */
  timeoutCode: string;
  /** The error of a call the caller aborted (ABORTED). */
  aborted(cause: unknown): PullSecretError;
  /** The error of a call past its deadline (STORE_TIMEOUT). */
  timeout(cause: unknown): PullSecretError;
}

function report(hook: ApiCallHook | undefined, method: string, code: string, started: number): void {
  if (hook === undefined) return;
  try {
    hook(method, code, performance.now() - started);
  } catch {
    // A metrics hook must never turn a store call into a failure.
  }
}

/**
 * Runs one SDK call through `run` with a signal of its own, aborted when the caller's signal aborts
 * or the deadline passes (the SDK's HTTP pipeline then cancels the request on the wire), and
 * reports the call to `onApiCall` once it settled. The two are linked by hand, not with
 * `AbortSignal.any`, which keeps a reference per call to a long-lived caller signal on Node 20.
 *
 * @throws `names.aborted(...)` when the caller aborted, `names.timeout(...)` past the deadline,
 *   otherwise whatever `run` threw, unclassified (the store classifies it).
 */
export async function timedCall<T>(
  options: TimedCallOptions,
  names: TimedCallNames,
  run: (abortSignal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { signal } = options;
  if (signal?.aborted) throw names.aborted(signal.reason);
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
    return await run(controller.signal);
  } catch (err) {
    if (signal?.aborted) {
      code = 'CANCELLED';
      throw names.aborted(signal.reason);
    }
    if (timedOut) {
      code = names.timeoutCode;
      throw names.timeout(err);
    }
    code = names.codeOf(err);
    throw err;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    report(options.onApiCall, names.method, code, started);
  }
}
