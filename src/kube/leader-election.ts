import { CoordinationV1Api, V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeError } from '../errors/index.js';
import type { Logger } from '../observability/logger.js';
import { loadKubeConfig, makeApiClient, withSignal } from './client.js';
import { apiFailure } from './errors.js';

/** The Lease calls the elector makes (`CoordinationV1Api`). */
export type LeaseApi = Pick<
  CoordinationV1Api,
  'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'
>;

/** Where the Lease is and how it is held (client-go's `LeaderElectionConfig`). */
export interface LeaseSettings {
  name: string;
  namespace: string;
  /** This replica's name in `holderIdentity` (the pod name). */
  identity: string;
  /** How long others wait after the last renewal they saw before taking the Lease (client-go: 15 s). */
  leaseDurationMs: number;
  /** The leader steps down when it could not renew for this long (client-go: 10 s). */
  renewDeadlineMs: number;
  /** Between two tries to acquire or renew (client-go: 2 s). */
  retryPeriodMs: number;
}

interface LeaderElectorOptions {
  api: LeaseApi;
  settings: LeaseSettings;
  logger: Logger;
  /** Told each change of leadership, in order (true: this replica now leads). Must not throw. */
  onChange: (leading: boolean) => void;
  /** Milliseconds now (tests); default `Date.now`. */
  now?: () => number;
}

/** What one try to acquire or renew found. */
type Attempt = 'held' | 'other' | 'error';

/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go's `leaderelection` package does
 * it (https://pkg.go.dev/k8s.io/client-go/tools/leaderelection): every `retryPeriod` a candidate reads
 * the Lease and takes it when it is free (no holder) or its holder has not renewed it for
 * `leaseDurationSeconds` as measured on this replica's clock since the record last changed (so
 * clocks need not agree); the holder renews every `retryPeriod` and steps down when it could not
 * renew for `renewDeadline` (shorter than the lease, so it has stopped before anyone else may start).
 * Every write is an update at the resourceVersion read, so two candidates never both win: the loser
 * gets 409 Conflict. `acquireTime` and `leaseTransitions` change only when the holder changes. On a
 * clean stop the holder releases the Lease (no holder, 1 s), so another replica takes it at its next
 * try instead of waiting out the lease. client-node has no elector of its own (1.4.0).
 */
export class LeaderElector {
  private leading = false;
  private readonly stopper = new AbortController();
  private loop?: Promise<void>;
  /** The record last read and when (this replica's clock) it last changed. */
  private observed?: { key: string; at: number };
  private lastRenew = 0;
  /** True after a failed try: the next failures of the series are logged at debug only. */
  private failing = false;
  private readonly now: () => number;

  constructor(private readonly options: LeaderElectorOptions) {
    this.now = options.now ?? Date.now;
  }

  /** True while this replica holds the Lease. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Starts campaigning (and renewing once it leads) in the background. */
  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Stops campaigning. With `release` (a clean shutdown) a holder gives the Lease up so another
   * replica takes it at once; without it (a crash, as tests kill a leader) the Lease stays until
   * it expires. Ends the leadership (`onChange(false)`) first.
   */
  async stop(options: { release: boolean } = { release: true }): Promise<void> {
    this.stopper.abort();
    await this.loop;
    const was = this.leading;
    this.setLeading(false);
    if (was && options.release) await this.release();
  }

  private async run(): Promise<void> {
    const { retryPeriodMs, renewDeadlineMs } = this.options.settings;
    while (!this.stopper.signal.aborted) {
      const attempt = await this.tryAcquireOrRenew();
      if (this.stopper.signal.aborted) return;
      if (attempt === 'held') {
        this.lastRenew = this.now();
        this.setLeading(true);
      } else if (this.leading && (attempt === 'other' || this.now() - this.lastRenew >= renewDeadlineMs)) {
        this.setLeading(false);
      }
      // Candidates spread their tries (client-go's JitterFactor 1.2); the holder renews on time.
      const wait = this.leading ? retryPeriodMs : retryPeriodMs * (1 + Math.random() * 0.2);
      await sleep(wait, undefined, { signal: this.stopper.signal }).catch(() => undefined);
    }
  }

  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    const { name, namespace, identity } = this.options.settings;
    this.options.logger.info(
      { operation: 'leader-election', lease: `${namespace}/${name}`, identity, leading },
      leading ? 'Became the leader' : 'Stopped leading',
    );
    this.options.onChange(leading);
  }

  /** One read and, when the Lease is ours to take or keep, one write. Never throws. */
  private async tryAcquireOrRenew(): Promise<Attempt> {
    const { api, settings } = this.options;
    const { name, namespace, identity } = settings;
    // A call that hangs must not keep a holder believing it leads past its renew deadline.
    const signal = AbortSignal.any([this.stopper.signal, AbortSignal.timeout(settings.renewDeadlineMs)]);
    const now = this.now();
    try {
      let lease: V1Lease;
      try {
        lease = await api.readNamespacedLease({ name, namespace }, withSignal(signal));
      } catch (err) {
        if (apiFailure(err)?.code !== 404) throw err;
        await api.createNamespacedLease({ namespace, body: this.record(undefined, now) }, withSignal(signal));
        this.failing = false;
        return 'held';
      }
      const spec = lease.spec ?? {};
      // The client hands MicroTimes back as the API's strings: compared as text.
      const key = `${spec.holderIdentity ?? ''}/${timeText(spec.renewTime)}`;
      if (this.observed?.key !== key) this.observed = { key, at: now };
      const holder = spec.holderIdentity ?? '';
      const expiresAt = this.observed.at + (spec.leaseDurationSeconds ?? 0) * 1000;
      if (holder !== '' && holder !== identity && now < expiresAt) return 'other';
      await api.replaceNamespacedLease(
        { name, namespace, body: this.record(lease, now) },
        withSignal(signal),
      );
      this.failing = false;
      return 'held';
    } catch (err) {
      if (this.stopper.signal.aborted) return 'error';
      // 409: another candidate wrote first (it leads, or we read a stale record): try again later.
      if (apiFailure(err)?.code === 409) return 'error';
      // The first failure of a series is a warning; its repeats (every retry period) are debug lines.
      const level = this.failing ? 'debug' : 'warn';
      this.failing = true;
      this.options.logger[level](
        { operation: 'leader-election', lease: `${namespace}/${name}`, ...describeError(err) },
        'Could not acquire or renew the Lease',
      );
      return 'error';
    }
  }

  /** The Lease held by this replica from `now`, keeping what must stay from the `current` one. */
  private record(current: V1Lease | undefined, now: number): V1Lease {
    const { name, namespace, identity, leaseDurationMs } = this.options.settings;
    const spec = current?.spec ?? {};
    const ours = spec.holderIdentity === identity;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: current?.metadata ?? { name, namespace },
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds: Math.max(1, Math.ceil(leaseDurationMs / 1000)),
        acquireTime: ours && spec.acquireTime !== undefined ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: current === undefined ? 0 : (spec.leaseTransitions ?? 0) + (ours ? 0 : 1),
      },
    };
  }

  /** Gives the Lease up (no holder, 1 s), if it is still ours. Never throws. */
  private async release(): Promise<void> {
    const { api, settings, logger } = this.options;
    const { name, namespace, identity } = settings;
    try {
      const signal = AbortSignal.timeout(settings.renewDeadlineMs);
      const lease = await api.readNamespacedLease({ name, namespace }, withSignal(signal));
      if (lease.spec?.holderIdentity !== identity) return;
      const now = microTime(this.now());
      const spec = { ...lease.spec, holderIdentity: undefined, leaseDurationSeconds: 1, renewTime: now };
      await api.replaceNamespacedLease({ name, namespace, body: { ...lease, spec } }, withSignal(signal));
      logger.info(
        { operation: 'leader-election', lease: `${namespace}/${name}`, identity },
        'Lease released',
      );
    } catch (err) {
      logger.warn(
        { operation: 'leader-election', lease: `${namespace}/${name}`, ...describeError(err) },
        'Could not release the Lease; another replica takes it when it expires',
      );
    }
  }
}

/**
 * An elector on the cluster of the kubeconfig the adapter uses (`kubernetes.kubeconfig`, else the
 * usual lookup). Makes no API call until `start`.
 * @throws CONFIG_INVALID when no kubeconfig can be loaded.
 */
export function createLeaderElector(
  kubeconfigPath: string | undefined,
  options: Omit<LeaderElectorOptions, 'api'>,
): LeaderElector {
  const { kubeConfig } = loadKubeConfig({ kubeconfigPath });
  return new LeaderElector({ ...options, api: makeApiClient(kubeConfig, CoordinationV1Api) });
}

/** A Lease time: RFC 3339 with microseconds, as the API server keeps it. */
function microTime(ms: number): V1MicroTime {
  return new V1MicroTime(ms);
}

/** A MicroTime as read (the client passes the API's string through) or as written. */
function timeText(time: V1MicroTime | string | undefined): string {
  return time === undefined ? '' : typeof time === 'string' ? time : time.toISOString();
}
