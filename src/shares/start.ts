/*
 * The shares plug-in (docs/shares.md). Registers no reconcile step: the adapter starts one
 * PullSecretShare controller (`startShares`) beside the pipeline when `shares.enabled`, in the
 * replica that holds the leader Lease only (one writer of the copies; started again in the replica
 * that takes over), and stops it when that replica stops leading or shuts down. The controller
 * copies a cluster's Secret into consumer namespaces after a SubjectAccessReview, and watches,
 * rechecks and revokes on its own (controller.ts).
 */
import type { Logger } from '../observability/logger.js';
import type { ShareMetrics } from './metrics.js';

/** A running share controller. */
interface RunningShares {
  stop(): Promise<void>;
}

/**
 * Starts the PullSecretShare controller (`shares.enabled`; called each time this replica becomes
 * the leader): loads the kubeconfig the adapter uses and watches in the background; makes no API
 * call itself. The client library is loaded lazily.
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
