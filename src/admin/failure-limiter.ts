/** Tracked client addresses at most; past it the oldest windows are dropped first. */
const MAX_CLIENTS = 10_000;

interface FailureLimiterOptions {
  /** Failed attempts allowed per client address per window (default 10). */
  maxFailures?: number;
  /** Window length in ms (default 60 000). */
  windowMs?: number;
  clock?: () => number;
}

/**
 * Counts failed authentications per client address in fixed windows. Once a client has used up its
 * failures, every request from it is refused (429) until its window ends, a valid token included:
 * guessing must not go on at full speed. Memory is bounded (`MAX_CLIENTS`).
 */
export class FailureLimiter {
  private readonly windows = new Map<string, { start: number; failures: number }>();
  private readonly maxFailures: number;
  private readonly windowMs: number;
  private readonly clock: () => number;

  constructor(options: FailureLimiterOptions = {}) {
    this.maxFailures = options.maxFailures ?? 10;
    this.windowMs = options.windowMs ?? 60_000;
    this.clock = options.clock ?? Date.now;
  }

  /** Seconds until `client` may try again, or 0 when it may now. */
  retryAfterSeconds(client: string): number {
    const w = this.live(client);
    if (w === undefined || w.failures < this.maxFailures) return 0;
    return Math.max(1, Math.ceil((w.start + this.windowMs - this.clock()) / 1000));
  }

  /** Records one failed attempt by `client`. */
  fail(client: string): void {
    const now = this.clock();
    let w = this.live(client);
    if (w === undefined) {
      if (this.windows.size >= MAX_CLIENTS) this.prune(now);
      w = { start: now, failures: 0 };
      this.windows.set(client, w);
    }
    w.failures++;
  }

  private live(client: string): { start: number; failures: number } | undefined {
    const w = this.windows.get(client);
    if (w !== undefined && this.clock() - w.start >= this.windowMs) {
      this.windows.delete(client);
      return undefined;
    }
    return w;
  }

  private prune(now: number): void {
    for (const [client, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(client);
    // Still full: drop the oldest (Map keeps insertion order).
    for (const client of this.windows.keys()) {
      if (this.windows.size < MAX_CLIENTS) break;
      this.windows.delete(client);
    }
  }
}
