/*
 * The admin API plug-in (docs/admin-api.md). Registers no reconcile step: the adapter starts the
 * admin server (`startAdmin`) beside the pipeline when `admin.enabled` (or `admin.protectMetrics`),
 * with the pipeline's `reconcile` for "reconcile now" and the store provider for reads and rollback,
 * and stops it first in its shutdown order. Tokens rotate from a file or a Kubernetes Secret.
 */
import type { IncomingMessage } from 'node:http';
import type { AdminSection } from '../config/admin.js';
import type { Logger } from '../observability/logger.js';
import type { ScrapeRefusal } from '../observability/health-server.js';
import { AdminService, type AdminServiceDeps } from './admin-service.js';
import { createAdminHandler } from './admin-handler.js';
import { startAdminServer, type RunningAdminServer } from './admin-server.js';
import { FailureLimiter } from './failure-limiter.js';
import { bearerToken, challenge, clientAddress } from './request-auth.js';
import { fileTokenStorage } from './token-file.js';
import { TokenManager } from './token-manager.js';
import type { TokenStorage } from './token-storage.js';

/** The admin parts of a running adapter. */
export interface AdminRuntime {
  readonly tokens?: TokenManager;
  readonly server?: RunningAdminServer;
  /** For the metrics server when `protectMetrics` is on. */
  readonly authorizeScrape?: (req: IncomingMessage) => ScrapeRefusal | undefined;
  close(): Promise<void>;
}

/**
 * The token storage the config names: a file, or a Kubernetes Secret (client loaded only then).
 * @throws CONFIG_INVALID when neither is set; what the Secret storage throws at creation
 */
export async function tokenStorageFor(
  tokens: AdminSection['tokens'],
  kubeconfigPath?: string,
): Promise<TokenStorage> {
  if (tokens.file !== undefined) return fileTokenStorage(tokens.file);
  if (tokens.secret !== undefined) {
    const { secretTokenStorage } = await import('./admin-token-secret.js');
    return secretTokenStorage({ ...tokens.secret, kubeconfigPath });
  }
  const { PullSecretError } = await import('../errors/index.js');
  throw new PullSecretError(
    'CONFIG_INVALID',
    'no admin token storage configured: set admin.tokens.file or admin.tokens.secret',
  );
}

/**
 * Starts what the admin section asks for: the token manager (when the API or the metrics protection
 * is on) and the admin API server (when enabled). Nothing when both are off.
 * @throws CONFIG_INVALID (token storage, TLS files), KUBE_* (token Secret), the listen error
 */
export async function startAdmin(
  config: AdminSection,
  deps: AdminServiceDeps & { logger: Logger; kubeconfigPath?: string },
): Promise<AdminRuntime> {
  if (!config.enabled && !config.protectMetrics) return { close: async () => {} };
  const logger = deps.logger.child({ component: 'admin' });
  const tokens = new TokenManager({
    storage: await tokenStorageFor(config.tokens, deps.kubeconfigPath),
    lifetimeMs: config.tokens.lifetimeSeconds * 1000,
    pollMs: config.tokens.pollSeconds * 1000,
    logger,
  });
  await tokens.start();
  const limiter = new FailureLimiter({
    maxFailures: config.failedAttempts.max,
    windowMs: config.failedAttempts.windowSeconds * 1000,
  });
  let server: RunningAdminServer | undefined;
  try {
    if (config.enabled) {
      const handler = createAdminHandler({ service: new AdminService(deps), tokens, limiter, logger });
      server = await startAdminServer({
        host: config.host,
        port: config.port,
        tls: config.tls,
        handler,
        logger,
      });
      logger.info(
        { operation: 'start', admin_port: server.port, protocol: server.protocol, tokens: tokens.where },
        'Admin API listening',
      );
    }
  } catch (err) {
    tokens.stop();
    throw err;
  }
  const authorizeScrape = (req: IncomingMessage): ScrapeRefusal | undefined => {
    const client = clientAddress(req);
    const wait = limiter.retryAfterSeconds(client);
    if (wait > 0) return { status: 429, headers: { 'retry-after': String(wait) } };
    if (tokens.check(bearerToken(req)) !== undefined) return undefined;
    limiter.fail(client);
    return {
      status: 401,
      headers: { 'www-authenticate': challenge(req.headers.authorization !== undefined) },
    };
  };
  return {
    tokens,
    server,
    authorizeScrape: config.protectMetrics ? authorizeScrape : undefined,
    close: async () => {
      tokens.stop();
      await server?.close();
    },
  };
}
