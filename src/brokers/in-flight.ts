/**
 * The messages a broker has handed to its handler and not settled yet, so that `stop` can wait for
 * them (drain) and, when the drain time is over, take the rest out (they stay unacknowledged).
 */
export class InFlight<T> {
  private readonly items = new Set<T>();
  private onIdle: (() => void) | undefined;

  get size(): number {
    return this.items.size;
  }

  add(item: T): void {
    this.items.add(item);
  }

  has(item: T): boolean {
    return this.items.has(item);
  }

  /** Removes a settled item; false when it was not there (a hard stop abandoned it). */
  delete(item: T): boolean {
    const removed = this.items.delete(item);
    if (removed && this.items.size === 0) this.onIdle?.();
    return removed;
  }

  /** Takes every item out (the drain time is over) and returns them. */
  abandon(): T[] {
    const items = [...this.items];
    this.items.clear();
    return items;
  }

  /** Resolves true once nothing is in flight, or false after `ms` (one timer, only while stopping). */
  waitIdle(ms: number): Promise<boolean> {
    if (this.items.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.onIdle = undefined;
        resolve(false);
      }, ms);
      this.onIdle = () => {
        clearTimeout(timer);
        this.onIdle = undefined;
        resolve(true);
      };
    });
  }
}
