import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { validateAdapterConfig, type AdapterConfig } from '../../src/adapter/config.js';
import { startAdapter, type RunningAdapter } from '../../src/adapter/service.js';
import { startHyperFleetApiStandIn, type HyperFleetApiStandIn } from '../../src/dev/hyperfleet-api/index.js';
import type { AdapterStatus, Cluster } from '../../src/hyperfleet/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { jsonFixture, VALID_PULL_SECRET } from './fixtures.js';

/** Everything one adapter integration test needs, on loopback. */
export interface AdapterStack {
  api: HyperFleetApiStandIn;
  adapter: RunningAdapter;
  config: AdapterConfig;
  dir: string;
  /** Every log line the adapter wrote. */
  logs: string[];
  /** Seeds a cluster that meets the default preconditions; `spec` entries override the fixture's. */
  seedCluster(spec?: Record<string, unknown>, conditions?: Cluster['status']['conditions']): Promise<Cluster>;
  /** Publishes a `com.redhat.hyperfleet.cluster.reconcile` event for the cluster (to `to`'s broker; default: the stack's adapter). */
  publish(cluster: Pick<Cluster, 'id' | 'generation'>, to?: RunningAdapter): Promise<void>;
  /** Waits until the adapter's status for the cluster satisfies `accept`. */
  waitForStatus(
    clusterId: string,
    accept: (status: AdapterStatus) => boolean,
    timeoutMs?: number,
  ): Promise<AdapterStatus>;
  /** Calls the stand-in's REST API (PATCH, DELETE). */
  request(method: string, path: string, body?: unknown): Promise<Response>;
  /** Starts another adapter with the same configuration, or `change`d (a second replica); stopped with the stack. */
  startReplica(
    change?: (config: AdapterConfig) => AdapterConfig,
  ): Promise<{ adapter: RunningAdapter; logs: string[] }>;
  stop(): Promise<void>;
}

export interface StackOptions {
  broker?: Record<string, unknown>;
  store?: Record<string, unknown>;
  /** Provider → store (`providers`); unset: the `store` section serves every cluster. */
  providers?: Record<string, unknown>;
  kubernetes?: Record<string, unknown>;
  execution?: Record<string, unknown>;
  deletion?: Record<string, unknown>;
  hyperfleetApi?: Record<string, unknown>;
  admin?: Record<string, unknown>;
  accountService?: Record<string, unknown>;
  /** The `entitlements` section (entitlement certificate refreshes; needs `accountService`). */
  entitlements?: Record<string, unknown>;
  retention?: Record<string, unknown>;
  pullSecretSource?: 'spec' | 'account-service';
  preconditions?: Record<string, unknown>;
  /** The `verification` section (registry verification of new pull secrets). */
  verification?: Record<string, unknown>;
  /** The PullSecretShare controller (`shares`). */
  shares?: Record<string, unknown>;
  /** The `notifications` section (Secret Manager event notifications that trigger reconciles). */
  notifications?: Record<string, unknown>;
  /** The `leaderElection` section (the Lease the replicas elect their leader on). */
  leaderElection?: Record<string, unknown>;
}

function captureLogs(): { logs: string[]; sink: Writable } {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { logs, sink };
}

let eventCounter = 0;

/** Starts the API stand-in and an adapter wired to it (embedded broker, local store, manifests by default). */
export async function startAdapterStack(options: StackOptions = {}): Promise<AdapterStack> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-adapter-'));
  const api = await startHyperFleetApiStandIn({});
  const { logs, sink } = captureLogs();
  const config = validateAdapterConfig({
    hyperfleetApi: { baseUrl: api.url, timeoutMs: 2000 },
    broker: options.broker ?? { type: 'embedded', maxInFlight: 8, retryDelayMs: 10, retryMaxDelayMs: 50 },
    store: options.store ?? { type: 'local', settings: { dir: join(dir, 'store') } },
    providers: options.providers,
    kubernetes: options.kubernetes ?? { target: 'manifests', manifestDir: join(dir, 'manifests') },
    execution: {
      concurrency: 8,
      retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 },
      ...options.execution,
    },
    deletion: options.deletion,
    server: { healthPort: 0, metricsPort: 0, host: '127.0.0.1', drainSeconds: 5 },
    admin: options.admin,
    accountService: options.accountService,
    entitlements: options.entitlements,
    retention: options.retention,
    pullSecretSource: options.pullSecretSource,
    preconditions: options.preconditions,
    verification: options.verification,
    shares: options.shares,
    notifications: options.notifications,
    leaderElection: options.leaderElection,
  });
  const logger = createLogger({ level: 'debug', destination: sink });
  const adapter = await startAdapter(config, logger);
  const replicas: RunningAdapter[] = [];
  const fixture = jsonFixture<Cluster & { spec: Record<string, unknown> }>('clusters/gcp-cluster.json');

  return {
    api,
    adapter,
    config,
    dir,
    logs,
    async seedCluster(spec = {}, conditions) {
      const { id: _id, href: _href, ...rest } = fixture;
      return api.seedCluster({
        ...rest,
        generation: 1,
        spec: { ...fixture.spec, pullSecret: { data: VALID_PULL_SECRET }, ...spec },
        status: {
          conditions: conditions ?? fixture.status.conditions.map((c) => ({ ...c, observed_generation: 1 })),
        },
      });
    },
    async publish(cluster, to = adapter) {
      const event = {
        specversion: '1.0',
        id: `evt-${++eventCounter}`,
        source: 'hyperfleet-sentinel',
        type: 'com.redhat.hyperfleet.cluster.reconcile',
        datacontenttype: 'application/json',
        data: {
          id: cluster.id,
          kind: 'Cluster',
          href: `/api/hyperfleet/v1/clusters/${cluster.id}`,
          generation: cluster.generation,
        },
      };
      await to.broker.publish(Buffer.from(JSON.stringify(event)));
    },
    async waitForStatus(clusterId, accept, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const status = api.listStatuses(clusterId).find((s) => s.adapter === 'pullsecret');
        if (status !== undefined && accept(status)) return status;
        if (Date.now() > deadline)
          throw new Error(
            `no matching status for ${clusterId} within ${timeoutMs} ms; last: ${JSON.stringify(status?.conditions)}`,
          );
        await sleep(20);
      }
    },
    request: (method, path, body) =>
      fetch(`${api.baseUrl}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    async startReplica(change = (c) => c) {
      const captured = captureLogs();
      const replica = await startAdapter(
        change(config),
        createLogger({ level: 'debug', destination: captured.sink }),
      );
      replicas.push(replica);
      return { adapter: replica, logs: captured.logs };
    },
    async stop() {
      await Promise.all(replicas.map((r) => r.stop()));
      await adapter.stop();
      await api.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The status of a condition type in a stored report. */
export function conditionOf(status: AdapterStatus, type: string): string | undefined {
  const c = status.conditions.find((x) => x.type === type);
  return c ? `${c.status}/${c.reason ?? ''}` : undefined;
}
