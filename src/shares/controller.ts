/**
 * The share controller's watch loop: the watches of `ShareState` queue the shares a change touches,
 * and one worker reconciles them one at a time (reconcile-share.ts), with a periodic access recheck.
 */
import { describeError } from '../errors/index.js';
import type { LoadedKubeConfig } from '../kube/client.js';
import { ShareApi } from '../kube/share-api.js';
import { ShareState, type StateChange } from '../kube/share-state.js';
import { ShareReconciler, type ShareReconcileOptions } from './reconcile-share.js';
import { SOURCE_KINDS } from './source-kinds.js';

/** The controller's cluster and settings. */
interface ShareControllerOptions extends ShareReconcileOptions {
  kubeConfig: LoadedKubeConfig['kubeConfig'];
  /** Access reviews are made again after this long (and after any RBAC change). */
  recheckSeconds: number;
}

/**
 * The share controller: for every PullSecretShare, every consumer namespace gets a copy of the
 * source cluster's Secret of the share's kind (pull secret or entitlement) only while a
 * SubjectAccessReview says one of its service accounts may `use` the share; a denied or revoked
 * consumer has none. Copies are labelled,
 * owned by the share (ownerReference), and a Secret the share does not own is never written.
 *
 * Event-driven from the watches of `ShareState` (kube/share-state.ts); access reviews are cached until an RBAC object
 * changes or `recheckSeconds` pass, so a resync of unchanged consumers makes no API call.
 * Shares are reconciled one at a time, the consumers of one share `concurrency` at a time.
 */
export class ShareController {
  private readonly state: ShareState;
  private readonly shares: ShareReconciler;
  private readonly queue = new Set<string>();
  private wake: (() => void) | undefined;
  private idleWaiters: (() => void)[] = [];
  private busy = false;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ShareControllerOptions) {
    this.state = new ShareState({
      kubeConfig: options.kubeConfig,
      sources: Object.values(SOURCE_KINDS),
      onChange: (change) => this.onChange(change),
      onError: (fields) => options.logger.debug(fields, 'Share watch interrupted; listing again'),
    });
    this.shares = new ShareReconciler(this.state, new ShareApi(options.kubeConfig), options);
  }

  /** Starts the watches, the worker and the periodic access recheck. Makes no call itself. */
  start(): void {
    this.state.start();
    this.loop = this.run();
    this.timer = setInterval(() => this.recheck(), this.options.recheckSeconds * 1000);
    this.timer.unref();
  }

  /** Makes every access review again and reconciles every share (what the interval does). */
  recheck(): void {
    this.shares.access.clear();
    this.shares.conflicts.clear();
    this.enqueueAll();
  }

  /** Reconciles every share from what is known (no access review is repeated). */
  resync(): void {
    this.enqueueAll();
  }

  /** Resolves once the watches have listed and no share is queued or being reconciled. */
  idle(): Promise<void> {
    if (this.state.synced() && !this.busy && this.queue.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.wake?.();
    await this.state.stop();
    await this.loop;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private enqueueAll(): void {
    for (const name of new Set([...this.state.shares.keys(), ...this.shares.known.keys()]))
      this.enqueue(name);
  }

  private enqueue(name: string): void {
    this.queue.add(name);
    this.wake?.();
  }

  private onChange(change: StateChange): void {
    this.route(change);
    // Also when nothing was queued: the worker reports idle once everything has been listed.
    this.wake?.();
  }

  private route(change: StateChange): void {
    switch (change.kind) {
      case 'share':
        return this.enqueue(change.name);
      case 'copy':
        return this.enqueue(change.share);
      case 'namespaces':
        return this.enqueueAll();
      case 'rbac':
        this.shares.access.clear();
        return this.enqueueAll();
      case 'source':
        for (const [name, known] of this.shares.known)
          if (
            known.spec === undefined ||
            (known.spec.source.clusterId === change.clusterId && known.spec.source.kind === change.source)
          )
            this.enqueue(name);
        for (const name of this.state.shares.keys()) if (!this.shares.known.has(name)) this.enqueue(name);
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const next = this.state.synced() ? this.queue.values().next() : undefined;
      if (next === undefined || next.done === true) {
        if (this.state.synced()) for (const w of this.idleWaiters.splice(0)) w();
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      this.queue.delete(next.value);
      this.busy = true;
      try {
        await this.shares.reconcile(next.value);
      } catch (err) {
        this.options.logger.warn(
          { operation: 'share', share: next.value, ...describeError(err) },
          'Share reconcile failed; retrying at the next change or recheck',
        );
      } finally {
        this.busy = false;
      }
    }
  }
}
