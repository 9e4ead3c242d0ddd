import type { AdapterConfig } from './config.js';
import type { Executor } from '../reconcile/executor.js';
import type { EventPipeline } from '../reconcile/pipeline.js';
import type { SecretCache } from '../kube/secret-cache.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';

/** The adapter's watches of what it owns (`informer` in the configuration). */
interface AdapterWatches {
  /** The Secret writer's read side; undefined when the informer is off. */
  readonly secrets?: SecretCache;
  /** Wraps the executor (Job mode: notes Jobs whose outcome an event reported). */
  track(executor: Executor): Executor;
  /** Starts drift repair and Job reports, which reconcile through the pipeline. */
  attach(pipeline: EventPipeline): void;
  stop(): Promise<void>;
}

const NONE: AdapterWatches = { track: (e) => e, attach: () => undefined, stop: () => Promise.resolve() };

/**
 * Waits up to `seconds` (0: not at all) for the Secret informer's first list, when it runs, as a
 * controller waits for its cache before it works: an event taken earlier reads its Secret with a GET,
 * and after a restart the Sentinel's re-sent fleet would do so by the thousand while the list runs.
 * Past the wait, events are taken anyway (a list refused for lack of the grant must not stop the
 * adapter). Logs how it ended; never throws.
 */
export async function waitForSecretList(
  watches: AdapterWatches,
  seconds: number,
  logger: Logger,
): Promise<void> {
  if (watches.secrets === undefined || seconds === 0) return;
  const started = performance.now();
  if (await watches.secrets.whenListed(seconds * 1000)) {
    logger.info(
      {
        operation: 'start',
        secrets: watches.secrets.size,
        duration_ms: Math.round(performance.now() - started),
      },
      'Kubernetes Secrets listed',
    );
  } else {
    logger.warn(
      { operation: 'start', wait_seconds: seconds },
      `Kubernetes Secrets not listed within ${seconds} s; taking events, each apply reads its Secret ` +
        `with a GET until the list succeeds`,
    );
  }
}

/**
 * Starts the Secret informer when the Kubernetes target is `api` and `informer.enabled` (the
 * default), and prepares drift repair (in-process mode, `informer.driftRepair`) and Job reports
 * (Job mode). Makes no API call itself: the watches list in the background and retry for ever,
 * and until the first list the writer reads with GET.
 * @throws CONFIG_INVALID when no kubeconfig can be loaded.
 */
export async function startWatches(
  config: AdapterConfig,
  metrics: Metrics,
  logger: Logger,
): Promise<AdapterWatches> {
  if (config.kubernetes.target !== 'api' || !config.informer.enabled) return NONE;
  const [{ loadKubeConfig }, { SecretCache }, { JobInformer }, { DriftRepair }, { JobReports }] =
    await Promise.all([
      import('../kube/client.js'),
      import('../kube/secret-cache.js'),
      import('../kube/job-informer.js'),
      import('./drift-repair.js'),
      import('./job-reports.js'),
    ]);
  const { kubeConfig } = loadKubeConfig({ kubeconfigPath: config.kubernetes.kubeconfig });
  const relisted = (resource: string) => (reason: string) => {
    metrics.relists.inc({ resource, reason });
    logger.info({ operation: 'watch', resource, reason }, 'Kubernetes watch listed again');
  };
  // A failed list is worth a warning (e.g. 403: the list/watch grant is missing; until it works every
  // apply reads with GET and drift waits for the next event); a watch that breaks now and then is not.
  const interrupted = (fields: Record<string, unknown>) =>
    fields.operation === 'list'
      ? logger.warn(fields, 'Kubernetes watch cannot list; retrying')
      : logger.debug(fields, 'Kubernetes watch interrupted; listing again');
  const secrets = new SecretCache({
    kubeConfig,
    namespaces: config.informer.namespaces,
    onSize: (n) => metrics.cacheObjects.set({ resource: 'secrets' }, n),
    onRelist: relisted('secrets'),
    onError: interrupted,
  });
  secrets.start();
  let drift: InstanceType<typeof DriftRepair> | undefined;
  let reconcileJob: (clusterId: string, generation: number, still: () => boolean) => Promise<unknown> = () =>
    Promise.resolve();
  const jobReports =
    config.execution.mode === 'job'
      ? new JobReports({
          reconcile: (clusterId, generation, still) => reconcileJob(clusterId, generation, still),
          logger,
        })
      : undefined;
  const jobs =
    jobReports === undefined
      ? undefined
      : new JobInformer({
          kubeConfig,
          namespace: config.execution.job.namespace,
          onFinished: jobReports.finished,
          onRemoved: jobReports.removed,
          onSize: (n) => metrics.cacheObjects.set({ resource: 'jobs' }, n),
          onRelist: relisted('jobs'),
          onError: interrupted,
        });
  return {
    secrets,
    track: (executor) => jobReports?.track(executor) ?? executor,
    attach(pipeline) {
      if (jobs !== undefined) {
        reconcileJob = (clusterId, generation, still) =>
          pipeline.reconcile(clusterId, generation, 'job-finished', still);
        jobs.start();
      }
      // In Job mode the Jobs write the Secret, and a finished Job of the same generation is not run again.
      if (config.execution.mode === 'in-process' && config.informer.driftRepair) {
        drift = new DriftRepair({
          cache: secrets,
          repair: (clusterId) => pipeline.reconcile(clusterId, 0, 'drift-repair'),
          onRepair: (kind) => metrics.driftRepairs.inc({ kind }),
          logger,
        });
      }
    },
    async stop() {
      drift?.stop();
      await Promise.all([secrets.stop(), jobs?.stop()]);
    },
  };
}
