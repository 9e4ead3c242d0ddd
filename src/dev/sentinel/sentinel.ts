import { setTimeout as sleep } from 'node:timers/promises';
import type { Broker } from '../../brokers/broker.js';
import { describeError } from '../../errors/index.js';
import type { HyperFleetClient } from '../../hyperfleet/client.js';
import type { Cluster } from '../../hyperfleet/types.js';
import type { Logger } from '../../observability/logger.js';
import { forEachLimited } from '../../util/for-each-limited.js';
import {
  decide,
  viewOf,
  type PublishReason,
  type PublishRecord,
  type SentinelIntervals,
} from './decision.js';
import { reconcileEventBody } from './reconcile-event.js';

export interface SentinelOptions {
  /** Where the clusters come from (any HyperFleet API). */
  api: Pick<HyperFleetClient, 'listClusters'>;
  /** Where the events go: a broker, or anything that publishes like one. */
  publisher: Pick<Broker, 'publish'>;
  intervals: SentinelIntervals;
  logger: Logger;
  /** Clusters per list request (default 100). */
  pageSize?: number;
  /** Events published at once (default 16). */
  publishConcurrency?: number;
  /** The clock (tests). */
  now?: () => number;
}

/** What one poll did. */
export interface PollResult {
  listed: number;
  published: number;
  failed: number;
  reasons: Partial<Record<PublishReason, number>>;
}

/** Totals since start. */
export interface SentinelStats {
  polls: number;
  failedPolls: number;
  published: number;
}

/**
 * The Sentinel: lists every cluster (page by page), decides per cluster with `decide`, and publishes a
 * reconcile event for those that need one. It remembers its last event per cluster in memory only, so
 * a restart sends at most one extra event per unreconciled cluster. A failed poll or publish is logged
 * and tried again on the next poll.
 */
export class Sentinel {
  private readonly sent = new Map<string, PublishRecord>();
  private readonly controller = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly now: () => number;
  readonly stats: SentinelStats = { polls: 0, failedPolls: 0, published: 0 };

  constructor(private readonly options: SentinelOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Starts polling: at once, then every `pollIntervalMs`. Calling it again does nothing. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Stops polling and waits for a poll in progress to finish. Safe to call twice. */
  async stop(): Promise<void> {
    this.controller.abort();
    await this.loop;
  }

  /**
   * One poll: list, decide, publish.
   * @throws PullSecretError from the listing (API_UNAVAILABLE, CONFIG_INVALID, ...); publish failures
   * are counted, not thrown
   */
  async pollOnce(): Promise<PollResult> {
    const clusters = await this.listAll();
    const now = this.now();
    const due: Array<{ cluster: Cluster; reason: PublishReason }> = [];
    for (const cluster of clusters) {
      const decision = decide(viewOf(cluster), this.sent.get(cluster.id), now, this.options.intervals);
      if (decision.publish) due.push({ cluster, reason: decision.reason });
    }
    // Forget clusters that are gone, so the memory follows the fleet.
    const listed = new Set(clusters.map((c) => c.id));
    for (const id of this.sent.keys()) if (!listed.has(id)) this.sent.delete(id);

    const result: PollResult = { listed: clusters.length, published: 0, failed: 0, reasons: {} };
    await forEachLimited(due, this.options.publishConcurrency ?? 16, async ({ cluster, reason }) => {
      try {
        await this.options.publisher.publish(reconcileEventBody(cluster, new Date(now)));
      } catch (err) {
        result.failed += 1;
        this.options.logger.warn(
          { operation: 'sentinel-publish', cluster_id: cluster.id, ...describeError(err) },
          'Sentinel could not publish an event',
        );
        return;
      }
      this.sent.set(cluster.id, { generation: cluster.generation, atMs: now });
      result.published += 1;
      result.reasons[reason] = (result.reasons[reason] ?? 0) + 1;
      this.options.logger.debug(
        { operation: 'sentinel-publish', cluster_id: cluster.id, generation: cluster.generation, reason },
        'Sentinel published a reconcile event',
      );
    });
    this.stats.polls += 1;
    this.stats.published += result.published;
    return result;
  }

  private async listAll(): Promise<Cluster[]> {
    const size = this.options.pageSize ?? 100;
    const clusters: Cluster[] = [];
    // Pages shift when clusters come and go during the listing; the next poll catches what this one missed.
    for (let page = 1; ; page++) {
      const list = await this.options.api.listClusters({ page, size }, { signal: this.controller.signal });
      clusters.push(...list.items);
      if (list.items.length === 0 || page * size >= list.total) return clusters;
    }
  }

  private async run(): Promise<void> {
    const signal = this.controller.signal;
    while (!signal.aborted) {
      try {
        const result = await this.pollOnce();
        if (result.published > 0 || result.failed > 0) {
          this.options.logger.info(
            {
              operation: 'sentinel-poll',
              listed: result.listed,
              published: result.published,
              failed: result.failed,
              reasons: result.reasons,
            },
            'Sentinel poll published events',
          );
        }
      } catch (err) {
        this.stats.failedPolls += 1;
        if (!signal.aborted)
          this.options.logger.warn(
            { operation: 'sentinel-poll', ...describeError(err) },
            'Sentinel poll failed; trying again next poll',
          );
      }
      await sleep(this.options.intervals.pollIntervalMs, undefined, { signal }).catch(() => undefined);
    }
  }
}
