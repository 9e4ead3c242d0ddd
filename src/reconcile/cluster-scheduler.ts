import { setMaxListeners } from 'node:events';

/** What `submit` resolves with when a newer event for the same cluster replaced this one. */
export const SUPERSEDED = Symbol('superseded');
type Superseded = typeof SUPERSEDED;

type Task<T> = (signal: AbortSignal) => Promise<T>;

interface Pending<T> {
  generation: number;
  task: Task<T>;
  /** The caller's signal (the broker's, for its message). */
  signal?: AbortSignal;
  resolve: (value: T | Superseded) => void;
  reject: (err: unknown) => void;
}

interface ClusterSlot<T> {
  running: boolean;
  /** Generation and stop switch of the task running now. */
  current?: { generation: number; controller: AbortController };
  pending?: Pending<T>;
}

/**
 * Runs work per cluster with these rules:
 * - at most `concurrency` tasks run at once, across clusters;
 * - tasks of one cluster never overlap: a second event waits for the first to finish;
 * - while one waits, a newer event for that cluster replaces it (the replaced one resolves with
 *   SUPERSEDED, so its message can be acked): the cluster is read fresh anyway, so only the last
 *   event matters. An older generation never replaces a newer one;
 * - an event of a newer generation than the running task's aborts that task's signal with the
 *   reason SUPERSEDED, so it stops at its next step (a DELETE during creation switches to cleanup
 *   at once) and reports nothing: a superseded generation never overwrites a newer report.
 *
 * Each task's signal fires on `abortAll`, on its caller's own signal, or when superseded.
 */
export class ClusterScheduler<T> {
  private readonly slots = new Map<string, ClusterSlot<T>>();
  private readonly ready: Array<() => void> = [];
  private running = 0;
  private stopped = false;

  constructor(private readonly concurrency: number) {
    if (!(concurrency >= 1)) throw new RangeError('concurrency must be at least 1');
  }

  /** Tasks running or waiting. */
  get size(): number {
    let n = 0;
    for (const slot of this.slots.values()) n += (slot.running ? 1 : 0) + (slot.pending ? 1 : 0);
    return n;
  }

  /**
   * Schedules `task` for `clusterId`; see the class rules. `signal` (the broker's for the message)
   * reaches the task's signal. Rejects with whatever `task` throws.
   */
  submit(
    clusterId: string,
    generation: number,
    task: Task<T>,
    signal?: AbortSignal,
  ): Promise<T | Superseded> {
    return new Promise((resolve, reject) => {
      let slot = this.slots.get(clusterId);
      if (slot === undefined) {
        slot = { running: false };
        this.slots.set(clusterId, slot);
      }
      const waiting = slot.pending;
      if (waiting !== undefined) {
        if (generation < waiting.generation) {
          resolve(SUPERSEDED);
          return;
        }
        waiting.resolve(SUPERSEDED);
      }
      slot.pending = { generation, task, signal, resolve, reject };
      if (slot.current !== undefined && generation > slot.current.generation)
        slot.current.controller.abort(SUPERSEDED);
      if (!slot.running) this.enqueue(clusterId, slot);
    });
  }

  /** Aborts the signal every running task received (hard stop after the drain time). */
  abortAll(): void {
    this.stopped = true;
    for (const slot of this.slots.values()) slot.current?.controller.abort();
  }

  private enqueue(clusterId: string, slot: ClusterSlot<T>): void {
    slot.running = true;
    const start = () => void this.run(clusterId, slot);
    if (this.running < this.concurrency) {
      this.running++;
      start();
    } else {
      this.ready.push(() => {
        this.running++;
        start();
      });
    }
  }

  private async run(clusterId: string, slot: ClusterSlot<T>): Promise<void> {
    // Take the newest pending work at the moment a worker is free, not when it was queued.
    const work = slot.pending;
    slot.pending = undefined;
    // One controller per task, linked by hand to the caller's signal: AbortSignal.any() with a
    // process-long signal keeps a reference per task on Node 20 (a leak in a long-running adapter).
    const controller = new AbortController();
    // A task's calls each listen on its signal (several store and API calls): by design, not a leak.
    setMaxListeners(0, controller.signal);
    const callerAbort = () => controller.abort(work?.signal?.reason);
    // The caller's signal is usually a broker's, shared by every message in flight: one listener per task.
    if (work?.signal !== undefined) setMaxListeners(0, work.signal);
    if (this.stopped) controller.abort();
    else if (work?.signal?.aborted) callerAbort();
    else work?.signal?.addEventListener('abort', callerAbort, { once: true });
    if (work !== undefined) slot.current = { generation: work.generation, controller };
    try {
      if (work !== undefined) work.resolve(await work.task(controller.signal));
    } catch (err) {
      work?.reject(err);
    } finally {
      work?.signal?.removeEventListener('abort', callerAbort);
      slot.current = undefined;
      this.running--;
      this.ready.shift()?.();
      if (slot.pending !== undefined) this.enqueue(clusterId, slot);
      else {
        slot.running = false;
        this.slots.delete(clusterId);
      }
    }
  }
}
