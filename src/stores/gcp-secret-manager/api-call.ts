import { grpc, type CallOptions as GaxCallOptions } from 'google-gax';
import { PullSecretError } from '../../errors/index.js';
import {
  abortedError,
  classifyGcpError,
  grpcCodeName,
  type CallTarget,
  type GrpcCodeName,
} from './errors.js';
import type { ApiCallHook } from './config.js';

/** Per-call settings of one Secret Manager RPC. */
export interface ApiCallOptions {
  signal?: AbortSignal | undefined;
  /** Deadline of this call in milliseconds. */
  timeoutMs: number;
  onApiCall?: ApiCallHook | undefined;
}

/** The outcome of a call whose listed status codes are answers, not failures. */
type Expected<T, C extends GrpcCodeName> = { ok: true; value: T } | { ok: false; code: C };

/**
 * A grpc-js interceptor that cancels the call on the wire when `signal` aborts. gax has no abort
 * support, and its public methods return plain promises (the cancellable one stays inside), so the
 * cancellation is attached to the gRPC call itself through `otherArgs.options.interceptors`.
 */
function cancelOnAbort(signal: AbortSignal): grpc.Interceptor {
  return (options, nextCall) => {
    const call = new grpc.InterceptingCall(nextCall(options), {
      start(metadata, _listener, next) {
        // A partial listener: grpc-js forwards the other events to the caller's listener.
        next(metadata, {
          onReceiveStatus(status, nextStatus) {
            signal.removeEventListener('abort', cancel);
            nextStatus(status);
          },
        });
      },
    });
    function cancel(): void {
      call.cancelWithStatus(grpc.status.CANCELLED, 'cancelled by the caller');
    }
    if (signal.aborted) queueMicrotask(cancel);
    else signal.addEventListener('abort', cancel, { once: true });
    return call;
  };
}

/** Settles with `promise`, or rejects as soon as `signal` aborts (gax may still be connecting). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error('non-error rejection'));
      },
    );
  });
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
 * Makes one RPC through `run` with the call's deadline, no gax retries (the caller retries step by
 * step) and cancellation on abort; reports it to `onApiCall`. Status codes listed in
 * `expected` are returned as `{ ok: false, code }`.
 *
 * @throws PullSecretError: ABORTED when `signal` aborted, otherwise the classified SDK error.
 */
export async function callExpecting<T, C extends GrpcCodeName>(
  target: CallTarget,
  options: ApiCallOptions,
  expected: readonly C[],
  run: (gaxOptions: GaxCallOptions) => Promise<T>,
): Promise<Expected<T, C>> {
  const { signal } = options;
  if (signal?.aborted) throw abortedError(target, signal.reason);
  const gaxOptions: GaxCallOptions = {
    timeout: options.timeoutMs,
    retry: null,
    otherArgs: { options: { interceptors: signal === undefined ? [] : [cancelOnAbort(signal)] } },
  };
  const started = performance.now();
  let code: GrpcCodeName = 'OK';
  try {
    return { ok: true, value: await raceAbort(run(gaxOptions), signal) };
  } catch (err) {
    if (signal?.aborted) {
      code = 'CANCELLED';
      throw abortedError(target, signal.reason);
    }
    code = grpcCodeName(err);
    const answer = expected.find((c) => c === code && typeof (err as { code?: unknown }).code === 'number');
    if (answer !== undefined) return { ok: false, code: answer };
    throw classifyGcpError(err, target);
  } finally {
    report(options.onApiCall, target.method, code, started);
  }
}

/** `callExpecting` with no expected codes: every failure throws. */
export async function call<T>(
  target: CallTarget,
  options: ApiCallOptions,
  run: (gaxOptions: GaxCallOptions) => Promise<T>,
): Promise<T> {
  const result = await callExpecting<T, never>(target, options, [], run);
  if (result.ok) return result.value;
  throw new PullSecretError('INTERNAL', `GCP Secret Manager ${target.method} returned an unexpected answer`);
}
