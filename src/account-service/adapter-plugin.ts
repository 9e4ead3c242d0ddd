/*
 * The account-service plug-in (docs/account-service.md). Registers, through the core's contracts:
 * the reconcile step `transferMergeStep` (transfer-merge-step.ts: an applied ownership transfer is
 * merged into every spec reconcile), a `PipelinePlugin` (the transfer fleet hears of the clusters
 * events read; failing transfer checks show in `Health`), the `PullSecretSource` for
 * `pullSecretSource: account-service`, and the transfer check task run in a cluster's scheduler slot
 * (transfer-task.ts). The fleet's schedule runs in the replica that leads (`lead`). The adapter
 * wires it in one line; the core imports nothing from here.
 */
import { checkAndApplyClusterTransfer, type ClusterTransferResult } from './apply-transfer.js';
import { createAccountServiceClient, type AccountServiceClient } from './client.js';
import { TRANSFER_REASONS, transferBackoff } from './transfer-check.js';
import type { HyperFleetClient } from '../hyperfleet/index.js';
import type { KubernetesSecretTarget } from '../kube/target.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { redactor } from '../pullsecret/redact.js';
import { validatePullSecret } from '../pullsecret/validate.js';
import { describeError, PullSecretError, toPullSecretError } from '../errors/index.js';
import type { AccountServiceSection, PullSecretSourceKind } from '../config/account-service.js';
import type { RetryPolicy } from '../util/retry.js';
import type { ReconcileStep } from '../reconcile/steps.js';
import { listClusterIds } from '../reconcile/cluster-list.js';
import type { EventPipeline } from '../reconcile/pipeline.js';
import type { PipelinePlugin, PullSecretSource } from '../reconcile/pipeline-plugin.js';
import { checkTransferThrough, type TransferCheckInput, type TransferRun } from './transfer-task.js';
import type { StoreProvider } from '../reconcile/store-provider.js';
import { decideRun, TransferFleet } from './transfer-fleet.js';
import { TransferHealth, type TransferProblem } from './transfer-health.js';
import { findAdapterStatus } from '../status-view/read-statuses.js';
import { ADAPTER_NAME } from '../reconcile/status-report.js';

/** What a cluster's reconcile names as the setting of its secret name (in the refusal of an unmanaged secret). */
const SECRET_NAME_SETTING = 'spec.pullSecret.secretName';

/** What the background fleets (transfer checks, entitlement refreshes) work with. */
export interface BackgroundDeps {
  stores: StoreProvider;
  kubernetes?: KubernetesSecretTarget;
  retry: RetryPolicy;
  api: HyperFleetClient;
  metrics: Metrics;
  logger: Logger;
  /** Tasks started at once (the pipeline's concurrency). */
  concurrency: number;
}

interface AdapterTransferDeps extends BackgroundDeps {
  section: AccountServiceSection;
  pullSecretSource: PullSecretSourceKind;
  /** The reconcile's steps for an applied transfer (registry verification, as for a spec's); the merge is added. */
  steps: readonly ReconcileStep[];
}

/** The account service parts of a running adapter (docs/account-service.md). */
export interface AdapterTransfers {
  readonly client: AccountServiceClient;
  /**
   * For `PipelineDeps.plugins`: the fleet schedules clusters events show and forgets gone ones; a
   * cluster's transfer health shows in every report.
   */
  readonly plugin: PipelinePlugin;
  /** For `PipelineDeps.pullSecretSource` (only with `pullSecretSource: account-service`). */
  readonly source?: PullSecretSource;
  /** Gives the checks the pipeline they run through (every replica: `checkNow`), before the broker starts. */
  attach(pipeline: EventPipeline): void;
  /**
   * Starts the fleet's schedule while this replica leads (one replica checks each cluster once per
   * interval); `stop` ends it when the leadership is lost.
   */
  lead(): { stop(): Promise<void> };
  /** One check now, through the pipeline (the admin API's trigger). */
  checkNow(clusterId: string): Promise<TransferRun>;
  readonly fleet?: TransferFleet;
  stop(): Promise<void>;
}

/**
 * Builds the account service client, the transfer health every report reads, the pull secret source
 * (`pullSecretSource: account-service`: OCM's pull secret for the cluster id as an external resource)
 * and, on `start`, the fleet schedule of transfer checks (`TransferFleet`), each run through the
 * pipeline's per-cluster scheduler as `checkAndApplyClusterTransfer` with no inline retry: the fleet
 * re-checks a 5xx after the backoff instead, so a waiting check never holds the cluster's slot.
 * @throws CONFIG_INVALID from the client (base URL, CA file)
 */
export function createAdapterTransfers(deps: AdapterTransferDeps): AdapterTransfers {
  const { section, metrics } = deps;
  const client = createAccountServiceClient(section);
  const health = new TransferHealth(section.transfer.interval);
  /** A cluster that could not be read for a retryable reason is checked again after the first step. */
  const retryInMs = transferBackoff(section.transfer.interval);
  let pipelineRef: EventPipeline | undefined;
  let fleet: TransferFleet | undefined;

  const check = async ({
    cluster,
    target,
    names,
    pullSecret,
    log,
    signal,
  }: TransferCheckInput): Promise<ClusterTransferResult> => {
    const store = await deps.stores.forTarget(target);
    return await checkAndApplyClusterTransfer(
      {
        clusterId: cluster.id,
        secretName: target.secretName,
        pullSecretData: pullSecret,
        namespace: target.namespace,
        secretNameSetting: SECRET_NAME_SETTING,
        names,
      },
      {
        store,
        kubernetes: deps.kubernetes,
        retry: deps.retry,
        log,
        signal,
        steps: deps.steps,
        check: { client, intervalMs: section.transfer.interval, retries: 0 },
      },
    );
  };
  const checkNow = async (clusterId: string): Promise<TransferRun> => {
    if (pipelineRef === undefined) return { kind: 'skipped', message: 'the adapter is starting' };
    const run = await checkTransferThrough(pipelineRef, clusterId, check, {
      health,
      onOutcome: (outcome) => metrics.transferChecks.inc({ outcome: TRANSFER_REASONS[outcome.kind].label }),
      reported: (id, signal) => reportedProblem(deps.api, id, signal),
    });
    if (run.kind === 'gone') health.forget(clusterId);
    return run;
  };

  const stopFleet = async (): Promise<void> => {
    const running = fleet;
    fleet = undefined;
    await running?.stop();
    // No longer the leader: the one that is derives the clusters' health again from their statuses.
    health.clear();
  };

  const source: PullSecretSource | undefined =
    deps.pullSecretSource === 'account-service'
      ? {
          // OCM serves any cluster by its id (`POST pull_secrets`): nothing else to name.
          has: () => true,
          async read(cluster, signal) {
            const bytes = await client.source(cluster.id, signal);
            const text = bytes.toString('utf8');
            // Masked while checked here; the reconcile registers it again for its own run.
            const release = redactor.register(credentialStrings(text));
            try {
              // The spec's rules (the reconcile applies them again with the store's size limit), named as the source's.
              validatePullSecret(bytes, { maxBytes: 1024 * 1024, targetName: 'Kubernetes Secret' });
            } catch (err) {
              const error = toPullSecretError(err);
              const named = `${error.message} (the account service's pull secret of cluster ${cluster.id})`;
              throw new PullSecretError(error.code, named);
            } finally {
              release();
            }
            return text;
          },
        }
      : undefined;

  return {
    client,
    plugin: {
      onClusterRead: (clusterId, exists) =>
        void (exists ? fleet?.seen(clusterId) : (fleet?.forget(clusterId), health.forget(clusterId))),
      statusOf: (clusterId) => {
        const healthProblem = health.problem(clusterId);
        return healthProblem === undefined ? undefined : { healthProblem };
      },
    },
    source,
    get fleet() {
      return fleet;
    },
    attach(pipeline) {
      pipelineRef = pipeline;
    },
    lead() {
      if (fleet !== undefined) return { stop: stopFleet };
      fleet = new TransferFleet({
        intervalMs: section.transfer.interval,
        jitter: section.transfer.jitter,
        requestsPerSecond: section.transfer.requestsPerSecond,
        maxInFlight: deps.concurrency,
        check: async (clusterId) => {
          const run = await checkNow(clusterId);
          if (run.kind === 'failed')
            deps.logger.warn(
              { operation: 'transfer-check', cluster_id: clusterId, ...describeError(run.error) },
              'Transfer check failed',
            );
          if (run.kind === 'done')
            return {
              kind: 'checked',
              ...(run.value.retryInMs === undefined ? {} : { retryInMs: run.value.retryInMs }),
            };
          const next = decideRun(run);
          return next === 'retry' ? { kind: 'checked', retryInMs: retryInMs[0] } : { kind: next };
        },
        list: (signal) => listClusterIds(deps.api, signal),
        logger: deps.logger,
      });
      fleet.start();
      return { stop: stopFleet };
    },
    checkNow,
    stop: stopFleet,
  };
}

/** The transfer problem the cluster's last reported `Health` shows (ours: `AccountServiceUnavailable`), if any. */
async function reportedProblem(
  api: HyperFleetClient,
  clusterId: string,
  signal: AbortSignal,
): Promise<TransferProblem | undefined> {
  const status = await findAdapterStatus(api, clusterId, ADAPTER_NAME, signal);
  const health = status?.conditions.find((c) => c.type === 'Health');
  if (health?.status !== 'False' || health.reason !== 'AccountServiceUnavailable') return undefined;
  return {
    reason: 'AccountServiceUnavailable',
    message: health.message ?? 'Degraded: ownership transfer checks failed',
  };
}
