import { startAdmin, type AdminRuntime } from '../admin/start-admin.js';
import type { Broker, Disposition } from '../brokers/broker.js';
import { createBroker } from '../brokers/registry.js';
import { createHyperFleetClient, type HyperFleetClient } from '../hyperfleet/index.js';
import { createKubernetesTarget } from '../kube/target-config.js';
import type { KubernetesSecretTarget } from '../kube/target.js';
import { startHealthServer, startMetricsServer, type RunningServer } from '../observability/health-server.js';
import type { Logger } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { ClusterScheduler } from './cluster-scheduler.js';
import type { AdapterConfig } from './config.js';
import type { Executor } from './executor.js';
import { InProcessExecutor } from './in-process-executor.js';
import { EventPipeline } from './pipeline.js';
import { ProviderRoutes } from './provider-routes.js';
import { StoreProvider } from './store-provider.js';
import { createJobExecutor } from './job-executor.js';
import { startWatches } from './watches.js';
import { createVerificationGate } from '../verification/from-config.js';
import { startStoreNotifications, type RunningStoreNotifications } from '../notifications/store-notifications.js';

/** A running adapter. */
export interface RunningAdapter {
  readonly metrics: Metrics;
  readonly broker: Broker;
  readonly api: HyperFleetClient;
  readonly healthPort: number;
  readonly metricsPort: number;
  /** The admin API and its tokens (docs/admin-api.md); empty when off. */
  readonly admin: AdminRuntime;
  /** True while connected and not draining (what /readyz says). */
  ready(): boolean;
  /** Graceful shutdown: stop taking events, finish in-flight work (up to drainSeconds), close everything. */
  stop(): Promise<void>;
}

/** Parts a caller may supply instead of building them from the config (dev stack, tests). */
export interface AdapterOverrides {
  broker?: Broker;
  metrics?: Metrics;
}

/**
 * Starts the adapter service: HyperFleet API client, broker, stores, Kubernetes target and its
 * watches (`watches.ts`), executor, pipeline, health (/healthz, /readyz) and metrics (/metrics) servers.
 * @throws PullSecretError when a part cannot start (e.g. BROKER_UNAVAILABLE, CONFIG_INVALID).
 */
export async function startAdapter(config: AdapterConfig, logger: Logger, overrides: AdapterOverrides = {}): Promise<RunningAdapter> {
  const metrics = overrides.metrics ?? new Metrics();
  // First: an unreadable verification.caFile stops the start before anything is opened.
  const verification = createVerificationGate(config.verification, metrics);
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
      { kind: p.store, config: p.settings, writesPerMinute: p.writesPerMinute, readsPerMinute: p.readsPerMinute, accessesPerMinute: p.accessesPerMinute },
    ]),
  );
  const stores = new StoreProvider({ routes, onApiCall: metrics.onStoreApiCall, pacing: metrics.storePacing });
  const watches = await startWatches(config, metrics, logger);
  const kubernetes: KubernetesSecretTarget | undefined =
    config.kubernetes.target === 'none'
      ? undefined
      : await createKubernetesTarget({ target: config.kubernetes.target, manifestDir: config.kubernetes.manifestDir, kubeconfigPath: config.kubernetes.kubeconfig }, logger, watches.secrets);
  const resources = { stores, kubernetes, cloudSecretOnDelete: config.deletion.cloudSecret };
  const executor: Executor = watches.track(
    config.execution.mode === 'job'
      ? await createJobExecutor(config, logger, resources)
      : new InProcessExecutor({ resources, retry: config.execution.retry, transferRecords: config.accountService !== undefined, verification }),
  );
  const scheduler = new ClusterScheduler<Disposition>(config.execution.concurrency);
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
  });
  watches.attach(pipeline);
  const broker = overrides.broker ?? (await createBroker(config.broker, { logger }));

  let draining = false;
  const ready = () => !draining && broker.isReady();
  const servers: RunningServer[] = [];
  let admin: AdminRuntime = { close: async () => {} };
  let notifications: RunningStoreNotifications = { stop: () => Promise.resolve() };
  let brokerStarted = false;
  try {
    const adminDeps = { api, stores, fieldPaths: config.preconditions.fieldPaths, routes: providerRoutes, writesKubernetes: kubernetes !== undefined, handleEvent: pipeline.handle };
    admin = await startAdmin(config.admin, { ...adminDeps, logger, kubeconfigPath: config.kubernetes.kubeconfig });
    servers.push(await startHealthServer({ port: config.server.healthPort, host: config.server.host, ready: () => ({ ready: ready(), reason: draining ? 'draining' : 'broker not connected' }) }));
    servers.push(await startMetricsServer({ port: config.server.metricsPort, host: config.server.host, registry: metrics.registry, authorize: admin.authorizeScrape }));
    await broker.start(pipeline.handle);
    brokerStarted = true;
    notifications = await startStoreNotifications(config.notifications, {
      reconcile: (clusterId) => pipeline.reconcile(clusterId, 0, 'store-notification'),
      count: (event_type, outcome) => metrics.storeNotifications.inc({ store: 'gcp', event_type, outcome }),
      logger,
    });
  } catch (err) {
    await notifications.stop();
    if (brokerStarted) await broker.stop({ drainMs: 0 }).catch(() => undefined);
    await Promise.all(servers.map((s) => s.close()));
    await admin.close();
    await watches.stop();
    await stores.close();
    throw err;
  }
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
    ready,
    stop: () =>
      (stopping ??= (async () => {
        draining = true;
        logger.info({ operation: 'stop' }, 'Draining: finishing in-flight events');
        await admin.close();
        await notifications.stop();
        await broker.stop({ drainMs: config.server.drainSeconds * 1000 });
        await watches.stop();
        scheduler.abortAll();
        await executor.close();
        verification?.verifier.close();
        await stores.close();
        await Promise.all(servers.map((s) => s.close()));
        logger.info({ operation: 'stop' }, 'Adapter stopped');
      })()),
  };
}
