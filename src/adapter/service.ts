import { startAdmin, type AdminRuntime } from '../admin/start-admin.js';
import type { Broker, Disposition } from '../brokers/broker.js';
import { createBroker } from '../brokers/registry.js';
import { createHyperFleetClient, type HyperFleetClient } from '../hyperfleet/index.js';
import { createKubernetesTarget } from '../kube/target-config.js';
import type { KubernetesSecretTarget } from '../kube/target.js';
import { startHealthServer, startMetricsServer, type RunningServer } from '../observability/health-server.js';
import type { Logger } from '../observability/logger.js';
import { AdapterMetrics as Metrics } from './metrics.js';
import { Shutdown } from './shutdown.js';
import { ClusterScheduler } from '../reconcile/cluster-scheduler.js';
import { adminRollback } from '../retention/rollback-in-slot.js';
import { pinStep } from '../retention/pin-step.js';
import { pinStoreFor } from '../retention/pin-store.js';
import type { AdapterConfig } from './config.js';
import type { Executor } from '../reconcile/executor.js';
import { InProcessExecutor } from './in-process-executor.js';
import { RetentionRunner } from '../retention/runner.js';
import { EventPipeline } from '../reconcile/pipeline.js';
import { ProviderRoutes } from '../reconcile/provider-routes.js';
import { StoreProvider } from '../reconcile/store-provider.js';
import { createJobExecutor } from './job-executor.js';
import { createAdapterEntitlements, type AdapterEntitlements } from '../entitlements/adapter-plugin.js';
import { createAdapterTransfers, type AdapterTransfers } from '../account-service/adapter-plugin.js';
import { startWatches, waitForSecretList } from './watches.js';
import { createVerificationGate } from '../verification/from-config.js';
import { verificationStep, type VerificationGate } from '../verification/index.js';
import { transferMergeStep } from '../account-service/transfer-merge-step.js';
import { retentionStep } from '../retention/step.js';
import type { ReconcileStep } from '../reconcile/steps.js';
import { startShares } from '../shares/start.js';
import { Leadership, leaderElector, type LeadershipView } from './leadership.js';
import { startStoreNotifications, type RunningStoreNotifications } from '../stores/notifications.js';

/** A running adapter. */
export interface RunningAdapter {
  readonly metrics: Metrics;
  readonly broker: Broker;
  readonly api: HyperFleetClient;
  readonly healthPort: number;
  readonly metricsPort: number;
  /** The admin API and its tokens (docs/admin-api.md); empty when off. */
  readonly admin: AdminRuntime;
  /** The account service parts (transfer fleet, source); undefined without `accountService`. */
  readonly transfers?: AdapterTransfers;
  /** The entitlement refresher's parts (`entitlements.enabled`); undefined when off. */
  readonly entitlements?: AdapterEntitlements;
  /** Whether this replica runs the once-per-fleet loops (the Lease, with Kubernetes). */
  readonly leadership: LeadershipView;
  /** True while connected and not draining (what /readyz says). */
  ready(): boolean;
  /** Graceful shutdown: stop taking events, finish in-flight work (up to drainSeconds), close everything. */
  stop(): Promise<void>;
}

/** Parts a caller may supply instead of building them from the config (dev stack, tests). */
interface AdapterOverrides {
  broker?: Broker;
  metrics?: Metrics;
}

/**
 * Starts the adapter service: HyperFleet API client, broker, stores, Kubernetes target and its
 * watches (`watches.ts`), executor, pipeline, health (/healthz, /readyz) and metrics (/metrics) servers.
 * @throws PullSecretError when a part cannot start (e.g. BROKER_UNAVAILABLE, CONFIG_INVALID).
 */
export async function startAdapter(
  config: AdapterConfig,
  logger: Logger,
  overrides: AdapterOverrides = {},
): Promise<RunningAdapter> {
  // Every part started so far, stopped in the one shutdown order when a later part fails to start;
  // a stop that fails there does not hide the start-up error.
  const shutdown = new Shutdown();
  try {
    return await startParts(config, logger, overrides, shutdown);
  } catch (err) {
    await shutdown.run({ drainMs: 0, tolerant: true });
    throw err;
  }
}

/** The start-up of {@link startAdapter}, each part tracked as soon as it has started. */
async function startParts(
  config: AdapterConfig,
  logger: Logger,
  overrides: AdapterOverrides,
  shutdown: Shutdown,
): Promise<RunningAdapter> {
  const track = shutdown.track.bind(shutdown);
  const metrics = overrides.metrics ?? new Metrics();
  // First: an unreadable verification.caFile stops the start before anything is opened.
  const verification = track('verification', createVerificationGate(config.verification, metrics), (gate) =>
    Promise.resolve(gate?.verifier.close()),
  );
  const api = createHyperFleetClient({
    baseUrl: config.hyperfleetApi.baseUrl,
    tokenFile: config.hyperfleetApi.tokenFile,
    caFile: config.hyperfleetApi.caFile,
    timeoutMs: config.hyperfleetApi.timeoutMs,
    retry: config.execution.retry,
    logger,
  });
  const routes = Object.fromEntries(
    Object.entries(config.providers).map(([name, p]) => [
      name,
      {
        kind: p.store,
        config: p.settings,
        writesPerMinute: p.writesPerMinute,
        readsPerMinute: p.readsPerMinute,
        accessesPerMinute: p.accessesPerMinute,
      },
    ]),
  );
  const stores = track(
    'stores',
    new StoreProvider({ routes, onApiCall: metrics.onStoreApiCall, pacing: metrics.storePacing }),
    (s) => s.close(),
  );
  await stores.preload();
  const watches = track('watches', await startWatches(config, metrics, logger), (w) => w.stop());
  // The once-per-fleet loops run in the replica that leads (docs/architecture.md, "Several replicas").
  const leadership = track('leadership', new Leadership({ gauge: metrics.leader, logger }), (l) => l.stop());
  // PullSecretShares (docs/shares.md), when enabled: one controller writes the copies.
  if (config.shares.enabled) leadership.add('shares', () => startShares(config, metrics, logger));
  const kubernetes: KubernetesSecretTarget | undefined =
    config.kubernetes.target === 'none'
      ? undefined
      : await createKubernetesTarget(
          {
            target: config.kubernetes.target,
            manifestDir: config.kubernetes.manifestDir,
            kubeconfigPath: config.kubernetes.kubeconfig,
          },
          logger,
          watches.secrets,
        );
  // Rollback pins (docs/retention.md): beside the Kubernetes target, seen by every replica and the Job.
  const pins = await pinStoreFor({
    ...config.kubernetes,
    namespace: config.execution.job.namespace,
    watch: {
      retry: config.execution.retry,
      onError: (fields) => logger.warn(fields, 'Rollback pin watch failed'),
    },
  });
  if (pins?.stop !== undefined) track('watches', pins, (p) => Promise.resolve(p.stop?.()));
  const pinned = pins === undefined ? [] : [pinStep(pins)];
  const resources = {
    stores,
    kubernetes,
    cloudSecretOnDelete: config.deletion.cloudSecret,
    entitlements: config.entitlements.enabled,
  };
  const executor: Executor = track(
    'executor',
    watches.track(
      config.execution.mode === 'job'
        ? await createJobExecutor(config, logger, resources, pins)
        : new InProcessExecutor({
            resources,
            retry: config.execution.retry,
            steps: [...pinned, ...reconcileSteps(config, verification, retentionRunner(config, metrics))],
          }),
    ),
    (e) => e.close(),
  );
  const scheduler = track('scheduler', new ClusterScheduler<Disposition>(config.execution.concurrency), (s) =>
    Promise.resolve(s.abortAll()),
  );
  // What the transfer fleet and the entitlement refresher both work with.
  const background = {
    stores,
    kubernetes,
    retry: config.execution.retry,
    api,
    metrics,
    logger,
    concurrency: config.execution.concurrency,
  };
  const transfers =
    config.accountService === undefined
      ? undefined
      : track(
          'transfers',
          createAdapterTransfers({
            section: config.accountService,
            pullSecretSource: config.pullSecretSource,
            ...background,
            steps: [...pinned, ...(verification === undefined ? [] : [verificationStep(verification)])],
          }),
          (t) => t.stop(),
        );
  const entitlements =
    transfers === undefined || !config.entitlements.enabled
      ? undefined
      : track(
          'entitlements',
          createAdapterEntitlements({
            section: config.entitlements,
            client: transfers.client,
            entitlementMetrics: { expiry: metrics.entitlementExpiry, counters: metrics.entitlements },
            ...background,
          }),
          (e) => e.stop(),
        );
  const providerRoutes = new ProviderRoutes(config.providers, config.preconditions.rules);
  const pipeline = new EventPipeline({
    api,
    executor,
    routes: providerRoutes,
    fieldPaths: config.preconditions.fieldPaths,
    scheduler,
    metrics,
    logger,
    writesKubernetes: kubernetes !== undefined,
    pullSecretSource: transfers?.source,
    // The features' pipeline plug-ins, in order.
    plugins: [transfers?.plugin, entitlements?.plugin].filter((plugin) => plugin !== undefined),
  });
  watches.attach(pipeline);
  const broker = overrides.broker ?? (await createBroker(config.broker, { logger }));
  metrics.watchBroker(broker);

  let draining = false;
  let listing = false;
  const ready = () => !draining && !listing && broker.isReady();
  const servers: RunningServer[] = [];
  const rollback = adminRollback(scheduler, {
    stores,
    kubernetes,
    writeKubernetes: config.execution.mode !== 'job',
    pins,
    retry: config.execution.retry,
    logger,
  });
  const adminDeps = {
    api,
    stores,
    fieldPaths: config.preconditions.fieldPaths,
    routes: providerRoutes,
    writesKubernetes: kubernetes !== undefined,
    handleEvent: pipeline.handle,
    checkTransfer: transfers === undefined ? undefined : (clusterId: string) => transfers.checkNow(clusterId),
    rollback: rollback.rollback,
    releasePin: rollback.release,
  };
  const admin = track(
    'admin',
    await startAdmin(config.admin, { ...adminDeps, logger, kubeconfigPath: config.kubernetes.kubeconfig }),
    (a) => a.close(),
  );
  servers.push(
    track(
      'servers',
      await startHealthServer({
        port: config.server.healthPort,
        host: config.server.host,
        ready: () => ({
          ready: ready(),
          reason: draining
            ? 'draining'
            : listing
              ? 'listing the managed Kubernetes Secrets'
              : 'broker not connected',
        }),
      }),
      (s) => s.close(),
    ),
  );
  servers.push(
    track(
      'servers',
      await startMetricsServer({
        port: config.server.metricsPort,
        host: config.server.host,
        registry: metrics.registry,
        authorize: admin.authorizeScrape,
      }),
      (s) => s.close(),
    ),
  );
  // No work before the Secrets are listed (nothing yet to drain if the pod is stopped meanwhile).
  listing = true;
  await waitForSecretList(watches, config.informer.listWaitSeconds, logger);
  listing = false;
  // Before the broker: the first events' clusters join the schedule (of the leader).
  transfers?.attach(pipeline);
  entitlements?.attach(pipeline);
  if (transfers !== undefined) leadership.add('transfer-checks', () => transfers.lead());
  if (entitlements !== undefined) leadership.add('entitlement-refreshes', () => entitlements.lead());
  leadership.begin(await leaderElector(config, leadership, logger));
  await broker.start(pipeline.handle);
  track('broker', broker, (b, { drainMs }) => b.stop({ drainMs }));
  track(
    'notifications',
    await startStoreNotifications(config.notifications, {
      reconcile: (clusterId) => pipeline.reconcile(clusterId, 0, 'store-notification'),
      count: metrics.countStoreNotification,
      subscribe: async (options) =>
        new (await import('../brokers/pubsub/notification-subscriber.js')).NotificationSubscriber(options),
      logger,
    }),
    (n: RunningStoreNotifications) => n.stop(),
  );
  logger.info(
    {
      operation: 'start',
      broker: broker.kind,
      store: [...new Set(Object.values(config.providers).map((p) => p.store))].join(','),
      execution: config.execution.mode,
      health_port: servers[0]?.port,
      metrics_port: servers[1]?.port,
    },
    'Adapter started',
  );

  let stopping: Promise<void> | undefined;
  return {
    metrics,
    broker,
    api,
    healthPort: servers[0]?.port ?? 0,
    metricsPort: servers[1]?.port ?? 0,
    admin,
    transfers,
    entitlements,
    leadership,
    ready,
    stop: () =>
      (stopping ??= (async () => {
        draining = true;
        logger.info({ operation: 'stop' }, 'Draining: finishing in-flight events');
        await shutdown.run({ drainMs: config.server.drainSeconds * 1000, tolerant: false });
        logger.info({ operation: 'stop' }, 'Adapter stopped');
      })()),
  };
}

/**
 * The reconcile's plug-in steps, one line each, in order: the applied-transfer merge (an account
 * service is configured), registry verification, retention.
 */
function reconcileSteps(
  config: AdapterConfig,
  verification: VerificationGate | undefined,
  retention: RetentionRunner | undefined,
): ReconcileStep[] {
  return [
    ...(config.accountService === undefined ? [] : [transferMergeStep]),
    ...(verification === undefined ? [] : [verificationStep(verification)]),
    ...(retention === undefined ? [] : [retentionStep(retention)]),
  ];
}

/** The retention runner when `retention.enabled` (docs/retention.md), reporting to the adapter's metrics. */
function retentionRunner(config: AdapterConfig, metrics: Metrics): RetentionRunner | undefined {
  if (!config.retention.enabled) return undefined;
  const { graceHours, retentionDays, keepVersions } = config.retention;
  return new RetentionRunner({
    policy: { graceHours, retentionDays, keepVersions },
    retry: config.execution.retry,
    observer: metrics.retention,
  });
}
