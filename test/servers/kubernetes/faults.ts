/**
 * Fault injection and call accounting for the test server.
 *
 * Verbs are HTTP methods, except that a `GET …?watch=true` is recorded as `WATCH`, so GET counts
 * mean reads.
 */

/** One injected fault. Unset matchers match anything. */
export interface FaultSpec {
  /** `GET`, `POST`, `PUT`, `PATCH`, `DELETE` or `WATCH`. */
  method?: string;
  /** Plural resource (`secrets`, `jobs`, `namespaces`). */
  resource?: string;
  namespace?: string;
  name?: string;
  /** Answer with this HTTP code and its real Status body (e.g. 409 Conflict, 500, 503). */
  status?: number;
  /** Destroy the connection without an answer (a socket error on the client). */
  reset?: boolean;
  /** Wait this long before answering (alone: a slow but successful answer). */
  delayMs?: number;
  /** How many matching requests it affects; default 1, `Infinity` for all. */
  times?: number;
  /** Called when a request takes the fault, before its delay: lets a test act at that exact point. */
  onTaken?: () => void;
}

/** A request as seen by the server, after authentication. */
export interface RequestRecord {
  method: string;
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  path: string;
  /** The authenticated user (absent when authentication failed). */
  user?: string;
  /** HTTP status answered (0 for a reset connection). */
  status: number;
}

interface ActiveFault extends FaultSpec {
  remaining: number;
}

/** Holds injected faults; each match consumes one of its `times`. */
export class FaultInjector {
  private faults: ActiveFault[] = [];

  /** Adds a fault; the returned function takes it out again (leaving other faults in place). */
  add(spec: FaultSpec): () => void {
    if (spec.status === undefined && !spec.reset && spec.delayMs === undefined)
      throw new Error('a fault needs status, reset or delayMs');
    const fault: ActiveFault = { ...spec, method: spec.method?.toUpperCase(), remaining: spec.times ?? 1 };
    this.faults.push(fault);
    return () => {
      this.faults = this.faults.filter((f) => f !== fault);
    };
  }

  clear(): void {
    this.faults = [];
  }

  /** The first fault matching the request, consumed; `undefined` when none applies. */
  take(req: Pick<RequestRecord, 'method' | 'resource' | 'namespace' | 'name'>): FaultSpec | undefined {
    const fault = this.faults.find(
      (f) =>
        f.remaining > 0 &&
        (f.method === undefined || f.method === req.method) &&
        (f.resource === undefined || f.resource === req.resource) &&
        (f.namespace === undefined || f.namespace === req.namespace) &&
        (f.name === undefined || f.name === req.name),
    );
    if (fault === undefined) return undefined;
    fault.remaining--;
    this.faults = this.faults.filter((f) => f.remaining > 0);
    fault.onTaken?.();
    return fault;
  }
}

/** The request log, with counts by verb and resource. */
export class CallLog {
  private records: RequestRecord[] = [];

  add(record: RequestRecord): void {
    this.records.push(record);
  }

  /** Number of requests matching the verb and resource (either may be omitted). */
  count(method?: string, resource?: string): number {
    const verb = method?.toUpperCase();
    return this.records.filter(
      (r) => (verb === undefined || r.method === verb) && (resource === undefined || r.resource === resource),
    ).length;
  }

  /** Number of POST, PUT, PATCH and DELETE requests, optionally for one resource. */
  writes(resource?: string): number {
    return ['POST', 'PUT', 'PATCH', 'DELETE'].reduce((n, m) => n + this.count(m, resource), 0);
  }

  all(): readonly RequestRecord[] {
    return [...this.records];
  }

  reset(): void {
    this.records = [];
  }
}
