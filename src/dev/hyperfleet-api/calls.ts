import { ROUTE_NAMES, type RouteName } from './routes.js';

/** One request as the stand-in saw it: never a body or a token, only what tests assert on. */
export interface CallRecord {
  route: RouteName;
  method: string;
  /** The raw request path and query, as sent. */
  path: string;
  /** HTTP status answered; 0 when no answer was sent (a hang, a reset connection). */
  status: number;
  /** Whether the request carried an Authorization header. */
  authorization: boolean;
  /** For a discarded status report (204): why. */
  discarded?: string;
  /** For an answer from an injected fault. */
  fault?: boolean;
}

/** Per-route counts (a call counts when it arrives, so faulted calls count too) and the ordered log. */
export class CallLog {
  readonly calls: Record<RouteName, number> = Object.fromEntries(ROUTE_NAMES.map((r) => [r, 0])) as Record<
    RouteName,
    number
  >;
  readonly log: CallRecord[] = [];

  arrive(route: RouteName): void {
    this.calls[route] += 1;
  }

  record(entry: CallRecord): void {
    this.log.push(entry);
  }

  get total(): number {
    return Object.values(this.calls).reduce((a, b) => a + b, 0);
  }

  reset(): void {
    for (const r of ROUTE_NAMES) this.calls[r] = 0;
    this.log.length = 0;
  }
}
