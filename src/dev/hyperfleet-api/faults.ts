import type { RouteName } from './routes.js';

/**
 * A fault answers the next `times` requests of a route differently from the real API:
 * - `status`: a problem+json answer with that HTTP status (e.g. 503, 429 with `retryAfter`);
 * - `hang`: no answer at all, until the client gives up or the stand-in stops;
 * - `reset`: the connection is destroyed (a network error for the client);
 * - `body` + `contentType`: a custom body, e.g. an HTML page from a proxy;
 * - `afterApply`: the request is carried out first and only the answer is replaced, as when a
 *   response is lost after the write happened;
 * - `delayMs`: the (real or faulty) answer is held back.
 */
export interface FaultSpec {
  route: RouteName | '*';
  /** Only requests about this cluster (unset: any). */
  clusterId?: string;
  status?: number;
  hang?: boolean;
  reset?: boolean;
  body?: string;
  contentType?: string;
  retryAfter?: string;
  afterApply?: boolean;
  delayMs?: number;
  /** How many requests to affect (default 1; `Infinity` until cleared). */
  times?: number;
}

export class FaultInjector {
  private faults: { spec: FaultSpec; remaining: number }[] = [];

  /** Queues a fault; faults for one route apply in the order injected. Returns a function removing it. */
  inject(spec: FaultSpec): () => void {
    const answers = [spec.status !== undefined, spec.hang === true, spec.reset === true].filter(
      Boolean,
    ).length;
    if (answers > 1) throw new Error('a fault takes one of status, hang or reset');
    if (answers === 0 && spec.delayMs === undefined)
      throw new Error('a fault needs a status, hang, reset or delayMs');
    const entry = { spec, remaining: spec.times ?? 1 };
    this.faults.push(entry);
    return () => {
      this.faults = this.faults.filter((f) => f !== entry);
    };
  }

  /** Takes the fault for one request of `route` (about `clusterId`), if any. */
  take(route: RouteName, clusterId?: string): FaultSpec | undefined {
    const entry = this.faults.find(
      (f) =>
        f.remaining > 0 &&
        (f.spec.route === route || f.spec.route === '*') &&
        (f.spec.clusterId === undefined || f.spec.clusterId === clusterId),
    );
    if (entry === undefined) return undefined;
    entry.remaining -= 1;
    this.faults = this.faults.filter((f) => f.remaining > 0);
    return entry.spec;
  }

  get pending(): number {
    return this.faults.length;
  }

  clear(): void {
    this.faults = [];
  }
}
