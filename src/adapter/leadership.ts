import type { Gauge } from 'prom-client';
import { describeError } from '../errors/index.js';
import type { LeaderElector } from '../kube/leader-election.js';
import { leaderElectionEnabled, leaseSettings } from '../kube/leader-election-config.js';
import type { AdapterConfig } from './config.js';
import type { Logger } from '../observability/logger.js';

/** A loop that runs while this replica leads. */
interface Led {
  stop(): Promise<void>;
}

/** What a running adapter shows of its leadership (docs/architecture.md, "Several replicas"). */
export interface LeadershipView {
  /** True while this replica runs the once-per-fleet loops. */
  readonly leading: boolean;
  /**
   * Stops leading without releasing the Lease, as a crashed replica leaves it: another replica
   * takes over once the lease expires. Events are still taken.
   */
  abandon(): Promise<void>;
}

/**
 * The once-per-fleet loops (transfer checks, entitlement refreshes, the share controller) and who
 * runs them: with a `LeaderElector` (several replicas on Kubernetes), only the replica holding the
 * Lease, started when it becomes the leader and stopped when it stops; without one (one process),
 * this replica, from `begin` to `stop`. Starts and stops run one at a time, in order; a loop that
 * fails to start is logged and left out until the next leadership. `pullsecret_leader` is 1 while
 * this replica leads.
 */
export class Leadership implements LeadershipView {
  private readonly loops: { name: string; start: () => Promise<Led> | Led }[] = [];
  private running: Led[] = [];
  private chain: Promise<void> = Promise.resolve();
  private elector?: LeaderElector;
  private ended = false;
  private isLeading = false;

  constructor(private readonly deps: { gauge: Gauge; logger: Logger }) {
    deps.gauge.set(0);
  }

  get leading(): boolean {
    return this.isLeading;
  }

  /** True when a loop was added: without one there is nothing to elect a leader for. */
  get hasLoops(): boolean {
    return this.loops.length > 0;
  }

  /** Adds a loop run while this replica leads (before `begin`). */
  add(name: string, start: () => Promise<Led> | Led): void {
    this.loops.push({ name, start });
  }

  /** Starts campaigning with `elector`, or leads at once without one. */
  begin(elector: LeaderElector | undefined): void {
    this.elector = elector;
    if (elector === undefined) this.change(true);
    else elector.start();
  }

  /** The elector's `onChange`. */
  readonly change = (leading: boolean): void => {
    if (this.ended && leading) return;
    this.isLeading = leading;
    this.deps.gauge.set(leading ? 1 : 0);
    this.chain = this.chain.then(() => (leading ? this.startAll() : this.stopAll()));
  };

  /** Stops the loops first, then gives the Lease up so another replica takes over at once. */
  async stop(): Promise<void> {
    await this.end();
    await this.elector?.stop({ release: true });
  }

  async abandon(): Promise<void> {
    await this.end();
    await this.elector?.stop({ release: false });
  }

  private async end(): Promise<void> {
    this.ended = true;
    this.change(false);
    await this.chain;
  }

  private async startAll(): Promise<void> {
    if (this.running.length > 0 || this.ended) return;
    for (const loop of this.loops) {
      try {
        this.running.push(await loop.start());
      } catch (err) {
        this.deps.logger.error(
          { operation: 'leader-election', loop: loop.name, ...describeError(err) },
          'A once-per-fleet loop could not start',
        );
      }
    }
  }

  private async stopAll(): Promise<void> {
    const running = this.running;
    this.running = [];
    await Promise.allSettled(running.map((led) => led.stop()));
  }
}

/**
 * The elector on the `leaderElection` Lease (with `kubernetes.target: api`, unless disabled, and
 * once-per-fleet loops to run), or undefined: this process leads alone. The client library is loaded only then.
 */
export async function leaderElector(
  config: Pick<AdapterConfig, 'leaderElection' | 'kubernetes'>,
  leadership: Leadership,
  logger: Logger,
): Promise<LeaderElector | undefined> {
  if (!leaderElectionEnabled(config) || !leadership.hasLoops) return undefined;
  const { createLeaderElector } = await import('../kube/leader-election.js');
  return createLeaderElector(config.kubernetes.kubeconfig, {
    settings: leaseSettings(config.leaderElection, process.env),
    logger,
    onChange: leadership.change,
  });
}
