import type { Disposition } from '../brokers/broker.js';
import { PullSecretError, toPullSecretError } from '../errors/index.js';
import type { KubernetesSecretTarget } from '../kube/target.js';
import type { Logger } from '../observability/logger.js';
import { SUPERSEDED, type ClusterScheduler } from '../reconcile/cluster-scheduler.js';
import type { StoreProvider, StoreTarget } from '../reconcile/store-provider.js';
import { backoffDelay, type RetryPolicy } from '../util/retry.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PinStore } from './pin.js';
import { releasePin, rollbackPullSecret, type RollbackRequest, type RollbackResult } from './rollback.js';

/** The admin API's rollback and release, as the adapter wires them. */
export interface AdminRollback {
  rollback: (target: StoreTarget, request: RollbackRequest) => Promise<RollbackResult>;
  /** Ends the cluster's pin; true when there was one. Absent without a pin store. */
  release?: (clusterId: string, by: string) => Promise<boolean>;
}

/**
 * The admin API's rollback (docs/retention.md): `rollbackPullSecret` run in the cluster's scheduler
 * slot, so it never overlaps a reconcile of that cluster. It queues at the lowest generation: it
 * never replaces a waiting event nor stops a running one. An event arriving meanwhile takes the
 * slot: before the version is written the rollback queues again after it (STORE_CONFLICT after
 * SUPERSEDED_ATTEMPTS turns); after, it has succeeded (its own version-added notification is such
 * an event), and the pin makes that event's reconcile serve the rolled-back content. In Job mode (`writeKubernetes`
 * false) the Kubernetes Secret is left to the reconcile the admin API triggers (the Job writes it).
 */
export function adminRollback(
  scheduler: ClusterScheduler<Disposition>,
  deps: {
    stores: StoreProvider;
    kubernetes: KubernetesSecretTarget | undefined;
    writeKubernetes: boolean;
    pins: PinStore | undefined;
    retry: RetryPolicy;
    logger: Logger;
  },
): AdminRollback {
  const { pins } = deps;
  return {
    rollback: async (target, request) => {
      // An event that takes the slot first (a notification of the last write, a resync) is let
      // through, then the rollback queues again: its turn comes once that event is done.
      for (let attempt = 1; ; attempt++) {
        const done = await attemptInSlot(scheduler, deps, target, request);
        if (done !== undefined) return done;
        if (attempt < SUPERSEDED_ATTEMPTS) {
          // A waiting event turns the rollback away at once: give it time to run first.
          await sleep(backoffDelay(REQUEUE_PACE, attempt));
          continue;
        }
        throw new PullSecretError(
          'STORE_CONFLICT',
          `events for cluster ${request.clusterId} took their turn ${attempt} times before the rollback ` +
            `wrote its version; check the versions and try again`,
        );
      }
    },
    release:
      pins === undefined
        ? undefined
        : (clusterId, by) =>
            releasePin(clusterId, { pins, by, log: deps.logger.child({ cluster_id: clusterId }) }),
  };
}

/** How often a rollback queues again after events took the cluster's slot before it wrote. */
const SUPERSEDED_ATTEMPTS = 8;
/** The pause before it queues again: 100 ms doubling to 2 s (about 8 s in all), jittered. */
const REQUEUE_PACE: RetryPolicy = { maxAttempts: SUPERSEDED_ATTEMPTS, baseDelayMs: 100, maxDelayMs: 2000 };

/** One turn in the slot: the result once the version is written; undefined when an event came first. */
async function attemptInSlot(
  scheduler: ClusterScheduler<Disposition>,
  deps: Parameters<typeof adminRollback>[1],
  target: StoreTarget,
  request: RollbackRequest,
): Promise<RollbackResult | undefined> {
  let written: RollbackResult | undefined;
  let result: RollbackResult | undefined;
  await scheduler.submit(request.clusterId, -1, async (signal) => {
    const store = await deps.stores.forTarget(target);
    const log = deps.logger.child({ cluster_id: request.clusterId });
    try {
      result = await rollbackPullSecret(request, {
        store,
        kubernetes: deps.kubernetes,
        writeKubernetes: deps.writeKubernetes,
        retry: deps.retry,
        log,
        signal,
        pins: deps.pins,
        onWritten: (r) => (written = r),
      });
    } catch (err) {
      if (written === undefined && signal.reason !== SUPERSEDED) throw err;
      if (written !== undefined)
        log.warn(
          { operation: 'rollback', error_code: toPullSecretError(err).code },
          'Rollback written and pinned; the Kubernetes Secret is left to the next reconcile',
        );
    }
    return 'ack';
  });
  return result ?? written;
}
