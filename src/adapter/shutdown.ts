/**
 * The one order in which the adapter's parts stop, for the normal stop and a failed start alike:
 * first what brings new work (the admin API, the background checks, store notifications, the loops
 * this replica runs as the leader, then the Lease given up), then the
 * broker (draining in-flight events), the watches and share controller, the scheduler's remaining
 * tasks and the executor, then what the work used (registry connections, stores), and the health
 * and metrics servers last, so probes and scrapes see the drain.
 */
const STOP_ORDER = [
  'admin',
  'entitlements',
  'transfers',
  'notifications',
  'leadership',
  'broker',
  'watches',
  'shares',
  'scheduler',
  'executor',
  'verification',
  'stores',
  'servers',
] as const;

type StopStage = (typeof STOP_ORDER)[number];

/** How a stop runs: `drainMs` for the broker; `tolerant` goes on past a part that fails to stop. */
interface StopOptions {
  drainMs: number;
  tolerant: boolean;
}

/** The started parts of an adapter and how each stops, run in `STOP_ORDER`. */
export class Shutdown {
  private readonly parts: { stage: StopStage; stop: (options: StopOptions) => Promise<unknown> }[] = [];

  /** Notes a started part and how to stop it; returns the part. */
  track<T>(stage: StopStage, part: T, stop: (part: T, options: StopOptions) => Promise<unknown>): T {
    this.parts.push({ stage, stop: (options) => stop(part, options) });
    return part;
  }

  /**
   * Stops every part noted, stage by stage; the parts of one stage (the two servers) together.
   * Not tolerant: throws the first failure after its stage, leaving later stages running.
   */
  async run(options: StopOptions): Promise<void> {
    for (const stage of STOP_ORDER) {
      const stops = this.parts.filter((part) => part.stage === stage).map((part) => part.stop(options));
      const results = await Promise.allSettled(stops);
      const failed = results.find((result) => result.status === 'rejected');
      if (failed !== undefined && !options.tolerant) throw failed.reason;
    }
  }
}
