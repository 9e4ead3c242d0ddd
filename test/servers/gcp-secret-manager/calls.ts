import { METHOD_NAMES, type MethodName } from './types.js';

/** One call as the server saw it: never the payload, only what tests assert on. */
export interface CallRecord {
  method: MethodName;
  /** The resource named in the request (parent, name or resource). */
  resource: string;
  /** gRPC status name of the answer, e.g. `OK`, `NOT_FOUND`; `CANCELLED` when the client gave up. */
  code: string;
  /** Whether the call carried an `authorization` header (credentials). */
  authorization: boolean;
}

/** Per-method call counts, the total, and the ordered log of calls. */
export class CallCounter {
  /** Live counts by method; zero for methods not called. */
  readonly calls: Record<MethodName, number> = Object.fromEntries(METHOD_NAMES.map((m) => [m, 0])) as Record<
    MethodName,
    number
  >;
  readonly log: CallRecord[] = [];

  /** Counts a call when it arrives, so faulted and cancelled calls count too. */
  arrive(method: MethodName): void {
    this.calls[method] += 1;
  }

  /** Logs the answer of a call. */
  record(entry: CallRecord): void {
    this.log.push(entry);
  }

  get total(): number {
    return Object.values(this.calls).reduce((a, b) => a + b, 0);
  }

  reset(): void {
    for (const m of METHOD_NAMES) this.calls[m] = 0;
    this.log.length = 0;
  }
}
