import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { validateAdapterConfig, type AdapterConfig } from '../../src/adapter/config.js';
import { startAdapter, type RunningAdapter } from '../../src/adapter/service.js';
import {
  startHyperFleetApiStandIn,
  type HyperFleetApiStandIn,
  type PutStatusResult,
} from '../../src/dev/hyperfleet-api/index.js';
import { Sentinel } from '../../src/dev/sentinel/index.js';
import { UpstreamAdapters } from '../../src/dev/upstream-adapters.js';
import { decodeClusterEvent } from '../../src/events/cluster-event.js';
import {
  createHyperFleetClient,
  type AdapterStatus,
  type AdapterStatusCreateRequest,
  type Cluster,
} from '../../src/hyperfleet/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { LocalStore } from '../../src/stores/local/index.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';
import { jsonFixture, VALID_PULL_SECRET } from '../support/fixtures.js';

// The dev stack as HyperFleet's end-to-end suite sees an adapter: the API stand-in, a Sentinel
// polling it, the simulated upstream adapters (validation, dns, placement), and the pull secret
// adapter on the embedded broker, in either execution mode:
// - in-process, writing Kubernetes Secrets as manifests;
// - Job mode against the Kubernetes API test server, which runs each Job's pod as the real CLI.
// Every status report the API receives is recorded with what the API did with it.

export type ExecutionMode = 'in-process' | 'job';

export const JOB_NAMESPACE = 'hyperfleet-system';
const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/**
 * How the test server runs a Job's `pull-secret`: the build when it is newer than every source file
 * (`npm test` builds first; it starts about three times faster), else the sources through tsx.
 */
function jobCommand(): string[] {
  const built = existsSync(BUILT) ? statSync(BUILT).mtimeMs : 0;
  const sources = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  if (built > 0 && sources.every((f) => statSync(join(SRC, f)).mtimeMs <= built))
    return [process.execPath, BUILT];
  return [process.execPath, '--import', import.meta.resolve('tsx'), join(SRC, 'cli', 'main.ts')];
}

/** One report the adapter sent, and what the API did with it. */
export interface SentReport {
  clusterId: string;
  report: AdapterStatusCreateRequest;
  result: PutStatusResult['outcome'];
}

export interface ConformanceStack {
  readonly mode: ExecutionMode;
  readonly api: HyperFleetApiStandIn;
  /** Job mode only. */
  readonly kube?: KubernetesTestServer;
  readonly manifestDir: string;
  /** The local store's directory (the adapter's and the Jobs'). */
  readonly storeDir: string;
  /** Reports of the pull secret adapter, in arrival order. */
  readonly reports: readonly SentReport[];
  adapter(): RunningAdapter | undefined;
  /** `POST /clusters` with a spec meeting the preconditions; creates its management namespace (Job mode). */
  createCluster(
    name: string,
    options?: { labels?: Record<string, string>; pullSecret?: string },
  ): Promise<Cluster>;
  /** `PATCH /clusters/{id}` with a new pull secret (a spec change: the generation goes up). */
  patchPullSecret(cluster: Cluster, pullSecret: string): Promise<Response>;
  request(method: string, path: string, body?: unknown): Promise<Response>;
  status(clusterId: string): AdapterStatus | undefined;
  reportsOf(clusterId: string): SentReport[];
  /** Events the Sentinel (or a test) delivered to the adapter for the cluster. */
  delivered(clusterId: string): number;
  /** Publishes a reconcile event for the cluster straight to the adapter's broker. */
  publish(clusterId: string, generation: number): Promise<void>;
  waitFor<T>(
    what: string,
    probe: () => T | undefined | false | Promise<T | undefined | false>,
    timeoutMs?: number,
  ): Promise<T>;
  waitForStatus(clusterId: string, accept: (status: AdapterStatus) => boolean): Promise<AdapterStatus>;
  /** Waits until `GET /clusters/{id}` answers 404 (hard-deleted). */
  waitHardDeleted(clusterId: string): Promise<void>;
  /** What is left of the cluster's objects: Kubernetes Secret or manifest, Jobs, data Secrets, cloud secret. */
  leftovers(clusterId: string): Promise<string[]>;
  stopAdapter(): Promise<void>;
  startAdapter(): Promise<void>;
  stop(): Promise<void>;
}

function fast(condition: string, ms: number): number {
  return condition === 'job' ? ms * 3 : ms;
}

/** Starts everything on loopback. */
export async function startConformanceStack(mode: ExecutionMode): Promise<ConformanceStack> {
  const dir = await mkdtemp(join(tmpdir(), `ps-conformance-${mode}-`));
  const storeDir = join(dir, 'store');
  const manifestDir = join(dir, 'manifests');
  const reports: SentReport[] = [];
  const api = await startHyperFleetApiStandIn({
    onReport: (clusterId, report, result) => {
      if (report.adapter === 'pullsecret') reports.push({ clusterId, report, result: result.outcome });
    },
  });
  const kube =
    mode === 'job'
      ? await startKubernetesTestServer({
          namespaces: [JOB_NAMESPACE],
          runJobs: { command: jobCommand(), env: { LOCAL_STORE_DIR: storeDir } },
        })
      : undefined;
  const config: AdapterConfig = validateAdapterConfig({
    hyperfleetApi: { baseUrl: api.url, timeoutMs: 5000 },
    broker: { type: 'embedded', maxInFlight: 16, retryDelayMs: 20, retryMaxDelayMs: 200 },
    store: { type: 'local', settings: { dir: storeDir } },
    kubernetes:
      kube === undefined
        ? { target: 'manifests', manifestDir }
        : { target: 'api', kubeconfig: kube.kubeconfigPath },
    execution: {
      mode,
      concurrency: 8,
      retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 },
      ...(mode === 'job'
        ? {
            job: {
              namespace: JOB_NAMESPACE,
              image: 'registry.example/pull-secret:conformance',
              timeoutSeconds: 60,
              waitSeconds: 30,
            },
          }
        : {}),
    },
    deletion: { cloudSecret: 'delete' },
    server: { healthPort: 0, metricsPort: 0, host: '127.0.0.1', drainSeconds: 2 },
    logLevel: 'debug',
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ level: 'debug', destination: sink });
  let adapter: RunningAdapter | undefined;
  const delivered = new Map<string, number>();
  // Events published while the adapter is down go nowhere, as to a consumer that is not there; the
  // Sentinel sends them again while the cluster is not reconciled.
  const toAdapter = {
    publish: async (body: Buffer) => {
      if (adapter === undefined) return;
      const id = decodeClusterEvent(body).clusterId;
      delivered.set(id, (delivered.get(id) ?? 0) + 1);
      await adapter.broker.publish(body);
    },
  };
  const client = createHyperFleetClient({
    baseUrl: api.url,
    timeoutMs: 5000,
    retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 50 },
    logger,
  });
  const sentinel = new Sentinel({
    api: client,
    publisher: new UpstreamAdapters(client, logger).inFrontOf(toAdapter),
    intervals: { pollIntervalMs: 100, debounceMs: 400, maxAgeMs: 60_000 },
    logger,
  });
  adapter = await startAdapter(config, logger);
  sentinel.start();
  const fixture = jsonFixture<Cluster & { spec: Record<string, unknown> }>('clusters/gcp-cluster.json');
  const request = (method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(`${api.baseUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  let eventCounter = 0;

  const stack: ConformanceStack = {
    mode,
    api,
    kube,
    manifestDir,
    storeDir,
    reports,
    adapter: () => adapter,
    async createCluster(name, { labels = {}, pullSecret = VALID_PULL_SECRET } = {}) {
      const response = await request('POST', '/clusters', {
        kind: 'Cluster',
        name,
        labels,
        spec: { ...fixture.spec, pullSecret: { data: pullSecret } },
      });
      if (response.status !== 201)
        throw new Error(`POST /clusters answered ${response.status}: ${await response.text()}`);
      const cluster = (await response.json()) as Cluster;
      // HyperShift creates the management namespace; the Job writes the Secret there.
      kube?.createNamespace(`clusters-${cluster.id}`);
      return cluster;
    },
    patchPullSecret: (cluster, pullSecret) =>
      request('PATCH', `/clusters/${cluster.id}`, {
        spec: { ...fixture.spec, pullSecret: { data: pullSecret } },
      }),
    request,
    status: (clusterId) => api.listStatuses(clusterId).find((s) => s.adapter === 'pullsecret'),
    reportsOf: (clusterId) => reports.filter((r) => r.clusterId === clusterId),
    delivered: (clusterId) => delivered.get(clusterId) ?? 0,
    async publish(clusterId, generation) {
      const event = {
        specversion: '1.0',
        id: `conformance-${++eventCounter}`,
        source: 'conformance',
        type: 'com.redhat.hyperfleet.cluster.reconcile',
        data: { id: clusterId, kind: 'Cluster', generation },
      };
      await toAdapter.publish(Buffer.from(JSON.stringify(event)));
    },
    async waitFor(what, probe, timeoutMs = fast(mode, 15_000)) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await probe();
        if (value !== undefined && value !== false) return value;
        if (Date.now() > deadline)
          throw new Error(
            `${mode}: timed out waiting for ${what}\n${logs
              .filter((l) => /"level":(40|50)/.test(l))
              .slice(-5)
              .join('\n')}`,
          );
        await sleep(25);
      }
    },
    waitForStatus(clusterId, accept) {
      return stack.waitFor(
        `a status of ${clusterId} that fits (last: ${JSON.stringify(stack.status(clusterId)?.conditions.map((c) => `${c.type}=${c.status}/${c.reason ?? ''}`))})`,
        () => {
          const status = stack.status(clusterId);
          return status !== undefined && accept(status) ? status : undefined;
        },
      );
    },
    async waitHardDeleted(clusterId) {
      await stack.waitFor(
        `hard-delete of ${clusterId}`,
        async () => (await request('GET', `/clusters/${clusterId}`)).status === 404,
      );
    },
    async leftovers(clusterId) {
      const left: string[] = [];
      if (existsSync(join(manifestDir, `clusters-${clusterId}`, `${clusterId}-pull-secret.yaml`)))
        left.push('Kubernetes Secret manifest');
      if (kube !== undefined) {
        if (kube.getObject('secrets', `clusters-${clusterId}`, `${clusterId}-pull-secret`))
          left.push('Kubernetes Secret');
        for (const kind of ['jobs', 'secrets']) {
          for (const o of kube
            .listObjects(kind, JOB_NAMESPACE)
            .filter((x) => x.metadata.labels?.['cluster-id'] === clusterId))
            left.push(`${kind}/${o.metadata.name ?? ''}`);
        }
      }
      const store = new LocalStore({ dir: storeDir });
      try {
        if ((await store.getSecret(`hyperfleet-${clusterId}-pull-secret`)) !== undefined)
          left.push('cloud secret');
      } finally {
        await store.close();
      }
      return left;
    },
    async stopAdapter() {
      const running = adapter;
      adapter = undefined;
      await running?.stop();
    },
    async startAdapter() {
      adapter ??= await startAdapter(config, logger);
    },
    async stop() {
      await sentinel.stop();
      await stack.stopAdapter();
      await kube?.close();
      await api.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return stack;
}

/** `status/reason` of a condition type in a stored status or a sent report. */
export function conditionOf(
  status: Pick<AdapterStatus, 'conditions'> | Pick<AdapterStatusCreateRequest, 'conditions'> | undefined,
  type: string,
): string | undefined {
  const c = status?.conditions.find((x) => x.type === type);
  return c ? `${c.status}/${c.reason ?? ''}` : undefined;
}

/** A valid pull secret that differs from the fixture's (a new version in the store). */
export function otherPullSecret(n: number): string {
  return VALID_PULL_SECRET.replace('test@example.com', `ops${n}@example.com`);
}
