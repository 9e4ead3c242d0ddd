import { status } from '@grpc/grpc-js';
import type { MethodName } from './types.js';

/**
 * Fault injection. A fault answers the next `times` calls of a method with a gRPC status instead
 * of the real answer; `afterApply` applies the call first (the write happens, the response is
 * "lost"), which is how a retried AddSecretVersion can create a duplicate version. `delayMs`
 * holds the answer back, e.g. to run into the client's deadline.
 */
export interface FaultSpec {
  /** The RPC to fail, or `*` for any. */
  method: MethodName | '*';
  /** Status to answer with; omit together with `delayMs` for a slow but successful answer. */
  code?: status;
  /** Status message; default: the service's usual text for `code`. */
  message?: string;
  /** How many calls to affect (default 1; `Infinity` until cleared). */
  times?: number;
  /** Apply the call, then answer with the error. */
  afterApply?: boolean;
  /** Wait this long before answering. */
  delayMs?: number;
}

/** A fault as taken for one call. */
export interface Fault {
  code: status | undefined;
  message: string;
  afterApply: boolean;
  delayMs: number;
}

/** The service's usual text for a status, so clients see realistic messages. */
const DEFAULT_MESSAGES: Partial<Record<status, string>> = {
  [status.UNAVAILABLE]: 'The service is currently unavailable.',
  [status.RESOURCE_EXHAUSTED]:
    "Quota exceeded for quota metric 'Access requests' and limit 'Access requests per minute per project'.",
  [status.DEADLINE_EXCEEDED]: 'Deadline exceeded.',
  [status.INTERNAL]: 'Internal error encountered.',
  [status.PERMISSION_DENIED]: 'The caller does not have permission.',
  [status.UNAUTHENTICATED]:
    'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
  [status.ABORTED]: 'The operation was aborted due to a concurrent modification.',
  [status.UNKNOWN]: 'read ECONNRESET',
  [status.CANCELLED]: 'The operation was cancelled.',
};

export class FaultInjector {
  private faults: { spec: FaultSpec; remaining: number }[] = [];

  /** Queues a fault; faults for the same method apply in the order injected. */
  inject(spec: FaultSpec): void {
    if (spec.code === undefined && spec.delayMs === undefined)
      throw new Error('a fault needs a code or a delayMs');
    this.faults.push({ spec, remaining: spec.times ?? 1 });
  }

  /** Takes the fault for one call of `method`, if any. */
  take(method: MethodName): Fault | undefined {
    const entry = this.faults.find(
      (f) => f.remaining > 0 && (f.spec.method === method || f.spec.method === '*'),
    );
    if (entry === undefined) return undefined;
    entry.remaining -= 1;
    this.faults = this.faults.filter((f) => f.remaining > 0);
    const { code, message, afterApply, delayMs } = entry.spec;
    return {
      code,
      message:
        message ??
        (code === undefined ? '' : (DEFAULT_MESSAGES[code] ?? `Injected fault (${status[code]}).`)),
      afterApply: afterApply ?? false,
      delayMs: delayMs ?? 0,
    };
  }

  /** Faults not yet used up. */
  get pending(): number {
    return this.faults.length;
  }

  clear(): void {
    this.faults = [];
  }
}
