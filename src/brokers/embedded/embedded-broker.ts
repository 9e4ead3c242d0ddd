import { PullSecretError } from '../../errors/index.js';
import { runHandler } from '../run-handler.js';
import type { Logger } from '../../observability/logger.js';
import { backoffDelay, type RetryPolicy } from '../../util/retry.js';
import type { Broker, Disposition, InboundMessage, MessageHandler } from '../broker.js';
import { InFlight } from '../in-flight.js';
import type { EmbeddedBrokerConfig } from './config.js';
import { Fifo } from './fifo.js';

interface Entry {
  readonly id: string;
  readonly body: Buffer;
  readonly attributes: Readonly<Record<string, string>>;
  readonly deliveryAttempt: number;
}

const DEFAULT_DRAIN_MS = 10_000;

/**
 * In-process broker for the dev stack and benchmarks: an in-memory queue delivering to one handler
 * with at most `maxInFlight` messages at once. 'ack' removes, 'retry' redelivers after a jittered
 * backoff with `deliveryAttempt + 1` (dropped and logged after `maxDeliveries`), 'reject' drops
 * (logged: there is no dead-letter queue). Messages live only as long as the process.
 *
 * The happy path uses no timers: a settled message frees its slot and the next one starts at once.
 */
export class EmbeddedBroker implements Broker {
  readonly kind = 'embedded';
  private readonly queue = new Fifo<Entry>();
  private readonly inFlight = new InFlight<Entry>();
  /** Messages waiting out a retry delay, by their timer. */
  private readonly delayed = new Map<NodeJS.Timeout, Entry>();
  private readonly retryPolicy: RetryPolicy;
  private handler: MessageHandler | undefined;
  private running = false;
  private controller = new AbortController();
  private stopping: Promise<void> | undefined;
  private draining = false;
  private nextId = 0;

  constructor(
    private readonly config: EmbeddedBrokerConfig,
    private readonly options: { logger?: Logger } = {},
  ) {
    this.retryPolicy = {
      maxAttempts: config.maxDeliveries,
      baseDelayMs: config.retryDelayMs,
      maxDelayMs: config.retryMaxDelayMs,
    };
  }

  /**
   * Starts delivering queued and future messages to `handler`. Messages published before `start`
   * wait in the queue. Restarting after `stop` resumes with what was left.
   * @throws PullSecretError INTERNAL when already started or still stopping.
   */
  start(handler: MessageHandler): Promise<void> {
    if (this.running || this.draining) {
      return Promise.reject(
        new PullSecretError('INTERNAL', 'embedded broker already started or still stopping'),
      );
    }
    this.handler = handler;
    this.running = true;
    this.stopping = undefined;
    this.controller = new AbortController();
    this.pump();
    return Promise.resolve();
  }

  /** Enqueues a message (never fails; the queue is unbounded). */
  publish(body: Buffer, attributes: Record<string, string> = {}): Promise<void> {
    this.nextId += 1;
    this.queue.push({
      id: String(this.nextId),
      body,
      attributes: Object.freeze({ ...attributes }),
      deliveryAttempt: 1,
    });
    this.pump();
    return Promise.resolve();
  }

  isReady(): boolean {
    return this.running;
  }

  /** Messages queued or waiting to be retried, not counting those in flight (for tests and the dev stack). */
  get pending(): number {
    return this.queue.length + this.delayed.size;
  }

  /**
   * Stops delivering, waits up to `drainMs` (default 10 s) for in-flight handlers, then aborts the
   * rest and puts their messages back at the front of the queue. Safe to call twice.
   */
  stop(options: { drainMs?: number } = {}): Promise<void> {
    if (this.stopping !== undefined) return this.stopping;
    if (!this.running) return Promise.resolve();
    this.stopping = this.drain(options.drainMs ?? DEFAULT_DRAIN_MS);
    return this.stopping;
  }

  private async drain(drainMs: number): Promise<void> {
    this.running = false;
    this.draining = true;
    // Messages waiting out a retry delay are not in flight: they go back to the queue at once.
    for (const [timer, entry] of this.delayed) {
      clearTimeout(timer);
      this.queue.push(entry);
    }
    this.delayed.clear();
    if (!(await this.inFlight.waitIdle(drainMs))) {
      this.controller.abort(new PullSecretError('ABORTED', 'broker stopping: drain time is over'));
      const abandoned = this.inFlight.abandon();
      this.options.logger?.warn(
        { broker: this.kind, abandoned: abandoned.length },
        'broker drain time over; unfinished messages requeued',
      );
      for (const entry of abandoned) {
        // Counted like a retry: a message whose handler never finishes is not redelivered forever.
        if (entry.deliveryAttempt >= this.config.maxDeliveries) this.dropLast(entry);
        else this.queue.unshift({ ...entry, deliveryAttempt: entry.deliveryAttempt + 1 });
      }
    }
    this.handler = undefined;
    this.draining = false;
  }

  private pump(): void {
    const handler = this.handler;
    if (!this.running || handler === undefined) return;
    const signal = this.controller.signal;
    while (this.inFlight.size < this.config.maxInFlight) {
      const entry = this.queue.shift();
      if (entry === undefined) return;
      this.inFlight.add(entry);
      void this.deliver(entry, handler, signal);
    }
  }

  private async deliver(entry: Entry, handler: MessageHandler, signal: AbortSignal): Promise<void> {
    const message: InboundMessage = {
      id: entry.id,
      body: entry.body,
      attributes: entry.attributes,
      deliveryAttempt: entry.deliveryAttempt,
    };
    const disposition = await runHandler(handler, message, signal, (fields, text) =>
      this.options.logger?.warn({ broker: this.kind, ...fields }, text),
    );
    // Not in the set any more: a hard stop already requeued it, so this late outcome is ignored.
    if (!this.inFlight.delete(entry)) return;
    this.settle(entry, disposition);
    this.pump();
  }

  private dropLast(entry: Entry): void {
    const fields = {
      broker: this.kind,
      message_id: entry.id,
      delivery_attempt: entry.deliveryAttempt,
      max_deliveries: this.config.maxDeliveries,
    };
    this.options.logger?.error(fields, 'broker message dropped after its last delivery attempt');
  }

  private settle(entry: Entry, disposition: Disposition): void {
    if (disposition === 'ack') return;
    const fields = { broker: this.kind, message_id: entry.id, delivery_attempt: entry.deliveryAttempt };
    if (disposition === 'reject') {
      this.options.logger?.warn(
        fields,
        'broker message rejected; dropped (the embedded broker has no dead-letter queue)',
      );
      return;
    }
    if (entry.deliveryAttempt >= this.config.maxDeliveries) {
      this.dropLast(entry);
      return;
    }
    const next: Entry = { ...entry, deliveryAttempt: entry.deliveryAttempt + 1 };
    if (!this.running) {
      this.queue.push(next);
      return;
    }
    const timer = setTimeout(
      () => {
        this.delayed.delete(timer);
        this.queue.push(next);
        this.pump();
      },
      backoffDelay(this.retryPolicy, entry.deliveryAttempt),
    );
    this.delayed.set(timer, next);
  }
}
