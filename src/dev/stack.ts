import { validateAdapterConfig } from '../adapter/config.js';
import { startAdapter, type RunningAdapter } from '../adapter/service.js';
import { createBroker } from '../brokers/registry.js';
import { PullSecretError } from '../errors/index.js';
import { createHyperFleetClient } from '../hyperfleet/index.js';
import type { Logger } from '../observability/logger.js';
import { prepareDataDir, type DevPaths } from './data-dir.js';
import { startAccountServiceStandIn, type AccountServiceStandIn } from './account-service/index.js';
import { startHyperFleetApiStandIn, type HyperFleetApiStandIn } from './hyperfleet-api/index.js';
import { DEFAULT_SENTINEL_INTERVALS, Sentinel, type SentinelIntervals } from './sentinel/index.js';
import { UpstreamAdapters } from './upstream-adapters.js';

/** The dev stack's default ports: API 8000, health 8080, metrics 9090, admin API 8443. */
export const DEV_PORTS = Object.freeze({ api: 8000, health: 8080, metrics: 9090, admin: 8443 });

export interface DevStackOptions {
  dataDir: string;
  /** Empty the data directory first (only if it is a dev data directory). */
  fresh?: boolean;
  /**
   * Ports; 0 picks a free one; unset ones default to `DEV_PORTS`, except the admin port, which is
   * free (0) when the health port is 0 (a throwaway stack: tests, benchmarks, `--exit-when-settled`).
   */
  ports?: { api?: number; health?: number; metrics?: number; admin?: number };
  sentinel?: Partial<SentinelIntervals>;
  /** Keep the API state in the data directory (default true); off for benchmarks. */
  persistApi?: boolean;
  /** Clusters worked on at once by the adapter (default 16). */
  concurrency?: number;
  /** Play the validation, dns and placement adapters (default true). */
  upstreamAdapters?: boolean;
  /**
   * Run the account-service stand-in on loopback and configure the adapter's transfer checks against
   * it (default false; `pull-secret dev` turns it on): every cluster is checked once a minute.
   */
  accountService?: boolean;
  logger: Logger;
}

/** A running dev stack: API stand-in, Sentinel, embedded broker and adapter in this process, on loopback. */
export interface DevStack {
  readonly api: HyperFleetApiStandIn;
  readonly adapter: RunningAdapter;
  readonly sentinel: Sentinel;
  /** The account-service stand-in, when `accountService` is on. */
  readonly account?: AccountServiceStandIn;
  readonly intervals: SentinelIntervals;
  readonly paths: DevPaths;
  readonly urls: {
    api: string;
    apiBase: string;
    health: string;
    metrics: string;
    admin: string;
    account?: string;
  };
  /** Stops the Sentinel, drains the adapter (and its broker), then the API. Safe to call twice. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';

/** A port taken by another process is a usage problem with a simple fix; say so. */
function portError(err: unknown, what: string, port: number): unknown {
  if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') return err;
  return new PullSecretError(
    'CONFIG_INVALID',
    `port ${port} (${what}) is in use: stop what uses it, or choose another port (0 picks a free one)`,
    { cause: err },
  );
}

/**
 * Starts the whole system on one machine with the embedded defaults: the HyperFleet API stand-in
 * (state in the data directory), the embedded broker, the adapter (local encrypted store, Kubernetes
 * Secrets as manifests in the data directory, in-process execution), simulated upstream adapters, and
 * the Sentinel polling the API and publishing to the broker.
 *
 * @throws PullSecretError CONFIG_INVALID (port in use, data directory refused), or what `startAdapter` throws;
 *   whatever was started is stopped again
 */
export async function startDevStack(options: DevStackOptions): Promise<DevStack> {
  const ports = {
    api: options.ports?.api ?? DEV_PORTS.api,
    health: options.ports?.health ?? DEV_PORTS.health,
    metrics: options.ports?.metrics ?? DEV_PORTS.metrics,
  };
  const adminPort = options.ports?.admin ?? (ports.health === 0 ? 0 : DEV_PORTS.admin);
  const intervals: SentinelIntervals = { ...DEFAULT_SENTINEL_INTERVALS, ...options.sentinel };
  const { logger } = options;
  const paths = await prepareDataDir(options.dataDir, { fresh: options.fresh ?? false });
  const api = await startHyperFleetApiStandIn({
    host: HOST,
    port: ports.api,
    ...(options.persistApi === false ? {} : { dataFile: paths.apiState }),
  }).catch((err: unknown) => {
    throw portError(err, 'HyperFleet API', ports.api);
  });
  const concurrency = options.concurrency ?? 16;
  let adapter: RunningAdapter;
  let account: AccountServiceStandIn | undefined;
  try {
    account = options.accountService === true ? await startAccountServiceStandIn({ host: HOST }) : undefined;
    const config = validateAdapterConfig({
      hyperfleetApi: { baseUrl: api.url },
      broker: { type: 'embedded', maxInFlight: concurrency },
      store: { type: 'local', settings: { dir: paths.store } },
      kubernetes: { target: 'manifests', manifestDir: paths.manifests },
      execution: { mode: 'in-process', concurrency },
      server: { healthPort: ports.health, metricsPort: ports.metrics, host: HOST, drainSeconds: 5 },
      // The admin API on loopback, plain HTTP (allowed there only), tokens in the data directory.
      admin: { enabled: true, host: HOST, port: adminPort, tokens: { file: paths.adminTokens } },
      // Transfer checks against the stand-in: once a minute per cluster, the first right after its first event.
      ...(account === undefined
        ? {}
        : {
            accountService: {
              baseUrl: account.url,
              transfer: { interval: '1m', jitter: 0, requestsPerSecond: 50 },
            },
          }),
    });
    const broker = await createBroker(config.broker, { logger });
    adapter = await startAdapter(config, logger, { broker }).catch((err: unknown) => {
      throw portError(
        err,
        'adapter health, metrics or admin API',
        (err as { port?: number }).port ?? ports.health,
      );
    });
  } catch (err) {
    await account?.stop();
    await api.stop();
    throw err;
  }

  // A client of its own, as an external Sentinel would have; short retries keep a poll short.
  const client = createHyperFleetClient({
    baseUrl: api.url,
    timeoutMs: 10_000,
    retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1_000 },
    logger,
  });
  const publisher =
    options.upstreamAdapters === false
      ? adapter.broker
      : new UpstreamAdapters(client, logger).inFrontOf(adapter.broker);
  const sentinel = new Sentinel({ api: client, publisher, intervals, logger });
  sentinel.start();

  let stopping: Promise<void> | undefined;
  return {
    api,
    adapter,
    sentinel,
    account,
    intervals,
    paths,
    urls: {
      api: api.url,
      apiBase: api.baseUrl,
      health: `http://${HOST}:${adapter.healthPort}`,
      metrics: `http://${HOST}:${adapter.metricsPort}/metrics`,
      admin: `http://${HOST}:${adapter.admin.server?.port ?? adminPort}`,
      ...(account === undefined ? {} : { account: account.url }),
    },
    stop: () =>
      (stopping ??= (async () => {
        await sentinel.stop();
        await adapter.stop();
        await account?.stop();
        await api.stop();
      })()),
  };
}
