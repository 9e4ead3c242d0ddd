/*
 * The shares plug-in (docs/shares.md). Registers no reconcile step: the adapter starts one
 * PullSecretShare controller (`startShares`) beside the pipeline when `shares.enabled`, and stops it
 * in its shutdown order. The controller copies a cluster's Secret into consumer namespaces after a
 * SubjectAccessReview, and watches, rechecks and revokes on its own (controller.ts).
 */
import type { Logger } from '../observability/logger.js';
import type { ShareMetrics } from './metrics.js';

/** A running share controller. */
interface RunningShares {
  stop(): Promise<void>;
}

/**
 * Starts the PullSecretShare controller (`shares.enabled`): loads the kubeconfig the adapter uses
 * and watches in the background; makes no API call itself. The client library is loaded lazily.
 * @throws CONFIG_INVALID when no kubeconfig can be loaded.
 */
export async function startShares(
  /** The adapter's `kubernetes.kubeconfig` and `shares` settings. */
  config: { kubernetes: { kubeconfig?: string }; shares: { recheckSeconds: number } },
  metrics: { shares: ShareMetrics },
  logger: Logger,
): Promise<RunningShares> {
  const [{ loadKubeConfig }, { ShareController }] = await Promise.all([
    import('../kube/client.js'),
    import('./controller.js'),
  ]);
  const { kubeConfig } = loadKubeConfig({ kubeconfigPath: config.kubernetes.kubeconfig });
  const controller = new ShareController({
    kubeConfig,
    metrics: metrics.shares,
    logger,
    recheckSeconds: config.shares.recheckSeconds,
  });
  controller.start();
  logger.info(
    { operation: 'start', component: 'shares', recheck_seconds: config.shares.recheckSeconds },
    'PullSecretShare controller started',
  );
  return { stop: () => controller.stop() };
}
