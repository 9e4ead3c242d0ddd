import type { PullSecretError } from '../errors/index.js';
import type { Cluster } from '../hyperfleet/index.js';
import type { Logger } from '../observability/logger.js';
import type { ClusterNames } from '../pullsecret/cluster-names.js';
import type { WorkOutcome, WorkTarget } from './outcome.js';
import type { ResolvedCluster } from './resolve-cluster.js';

/** What a plug-in adds to a cluster's status report. */
export interface StatusAddition {
  /** Turns a `Health=True` into False with this reason (transfer checks failing past their backoff). */
  healthProblem?: { reason: string; message: string };
  /** Fields added to `data` (the entitlement certificate's expiry). */
  data?: Record<string, unknown>;
}

/**
 * What a feature plugs into the event pipeline (`PipelineDeps.plugins`), in order. Every hook is
 * optional, runs in the cluster's scheduler slot and must not block.
 */
export interface PipelinePlugin {
  /** Hears of every cluster an event read: `exists` false when it is gone or being deleted. */
  onClusterRead?(clusterId: string, exists: boolean): void;
  /** A reconcile wrote a new pull secret version (created or updated, not a dry run). */
  onPullSecretWritten?(clusterId: string): void;
  /** What the plug-in adds to the status report of `outcome`. */
  statusOf?(clusterId: string, outcome: WorkOutcome): StatusAddition | undefined;
}

/** Where the pipeline reads a cluster's pull secret when it is not the spec's (`pullSecretSource: account-service`). */
export interface PullSecretSource {
  /** True when the source can serve the cluster: `params.hasPullSecret` of the preconditions. */
  has(cluster: Cluster): boolean;
  /** The pull secret text (a credential). @throws PullSecretError */
  read(cluster: Cluster, signal: AbortSignal): Promise<string>;
}

/** One resolved cluster's current inputs, as a task run for it (`EventPipeline.runForCluster`) gets them. */
export interface ClusterTaskInput {
  cluster: Cluster;
  target: WorkTarget;
  /** The names `resolveCluster` derived and checked: not derived again. */
  names: ClusterNames;
  /** The whole resolution, for a fresh reconcile after the task. */
  resolved: ResolvedCluster;
  /** The cluster's pull secret text from its source (a credential). */
  pullSecret: string;
  log: Logger;
  signal: AbortSignal;
}

/**
 * What a task of one cluster did (`EventPipeline.runForCluster`): `done` with its value, or why it
 * did not run (or did not finish): the cluster gone or being deleted, skipped (unroutable,
 * preconditions, no pull secret), superseded by a newer event, or failed.
 */
export type ClusterRun<T> =
  | { kind: 'done'; value: T }
  | { kind: 'gone' }
  | { kind: 'skipped'; message: string }
  | { kind: 'superseded' }
  | { kind: 'failed'; error: PullSecretError };
