import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ClusterScheduler, SUPERSEDED } from '../../src/reconcile/cluster-scheduler.js';
import { validateAdapterConfig } from '../../src/adapter/config.js';
import type { ClusterCleanup, ClusterWork, Executor } from '../../src/reconcile/executor.js';
import type { WorkOutcome, WorkTarget } from '../../src/reconcile/outcome.js';
import { EventPipeline } from '../../src/reconcile/pipeline.js';
import { ProviderRoutes } from '../../src/reconcile/provider-routes.js';
import type { Disposition, InboundMessage } from '../../src/brokers/broker.js';
import { startHyperFleetApiStandIn, type HyperFleetApiStandIn } from '../../src/dev/hyperfleet-api/index.js';
import { PullSecretError } from '../../src/errors/index.js';
import { createHyperFleetClient, type Cluster } from '../../src/hyperfleet/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { AdapterMetrics as Metrics } from '../../src/adapter/metrics.js';
import { jsonFixture, VALID_PULL_SECRET } from '../support/fixtures.js';

// The pipeline over the one Executor contract, against the API stand-in: the broker's per-message
// signal reaches the executor's work, and an event of a newer generation stops the running one,
// which then reports nothing.

/** An executor whose `execute` waits until its signal fires (or answers at once after the first call). */
class WaitingExecutor implements Executor {
  readonly aborts: unknown[] = [];
  calls = 0;

  async execute(work: ClusterWork, signal: AbortSignal): Promise<WorkOutcome> {
    if (++this.calls > 1)
      return { kind: 'failed', error: new PullSecretError('INTERNAL', 'second call'), target: work.target };
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    this.aborts.push(signal.reason);
    return { kind: 'failed', error: new PullSecretError('ABORTED', 'aborted'), target: work.target };
  }

  readonly finalized: WorkTarget[] = [];

  async finalize(cleanup: ClusterCleanup): Promise<WorkOutcome> {
    this.finalized.push(cleanup.target);
    return { kind: 'finalized', target: cleanup.target, kubernetesRemoved: true, cloud: 'absent' };
  }

  async close(): Promise<void> {}
}

function message(clusterId: string, generation: number): InboundMessage {
  const event = {
    specversion: '1.0',
    id: `e-${generation}`,
    source: 'test',
    type: 'com.redhat.hyperfleet.cluster.reconcile',
    data: { id: clusterId, kind: 'Cluster', generation },
  };
  return {
    id: `m-${generation}`,
    body: Buffer.from(JSON.stringify(event)),
    attributes: {},
    deliveryAttempt: 1,
  };
}

describe('event pipeline and the executor contract', () => {
  let api: HyperFleetApiStandIn;
  const fixture = jsonFixture<Cluster & { spec: Record<string, unknown> }>('clusters/gcp-cluster.json');
  const config = validateAdapterConfig({
    hyperfleetApi: { baseUrl: 'http://127.0.0.1:9' },
    broker: { type: 'embedded' },
  });
  const sink = new Writable({ write: (_c, _e, done) => done() });

  const reports: Array<{ clusterId: string; finalized?: string }> = [];
  before(
    async () =>
      (api = await startHyperFleetApiStandIn({
        onReport: (clusterId, report) =>
          reports.push({
            clusterId,
            finalized: report.conditions.find((c) => c.type === 'Finalized')?.status,
          }),
      })),
  );
  after(async () => api.stop());

  function pipeline(executor: Executor, metrics = new Metrics()): EventPipeline {
    const logger = createLogger({ level: 'error', destination: sink });
    return new EventPipeline({
      api: createHyperFleetClient({
        baseUrl: api.url,
        timeoutMs: 2000,
        retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
        logger,
      }),
      executor,
      routes: new ProviderRoutes(config.providers, config.preconditions.rules),
      fieldPaths: config.preconditions.fieldPaths,
      scheduler: new ClusterScheduler<Disposition>(4),
      metrics,
      logger,
      writesKubernetes: false,
    });
  }

  async function seed(): Promise<Cluster> {
    const { id: _id, href: _href, ...rest } = fixture;
    return api.seedCluster({
      ...rest,
      generation: 2,
      spec: { ...fixture.spec, pullSecret: { data: VALID_PULL_SECRET } },
    });
  }

  it("the broker's per-message signal reaches the executor's work", async () => {
    const cluster = await seed();
    const executor = new WaitingExecutor();
    const broker = new AbortController();
    const handled = pipeline(executor).handle(message(cluster.id, 2), broker.signal);
    while (executor.calls === 0) await new Promise((r) => setTimeout(r, 5));
    broker.abort('drain time over');
    assert.equal(await handled, 'retry', 'the message is not acknowledged');
    assert.deepEqual(executor.aborts, ['drain time over']);
  });

  it('an event of a newer generation stops the running work, which reports nothing', async () => {
    const cluster = await seed();
    const executor = new WaitingExecutor();
    const p = pipeline(executor);
    const older = p.handle(message(cluster.id, 1));
    while (executor.calls === 0) await new Promise((r) => setTimeout(r, 5));
    const newer = p.handle(message(cluster.id, 2));
    assert.equal(await older, 'ack');
    assert.deepEqual(executor.aborts, [SUPERSEDED]);
    assert.equal(await newer, 'ack');
    const statuses = api.listStatuses(cluster.id);
    assert.equal(statuses.length, 1, 'one report, from the newer event');
    assert.equal(statuses[0]?.conditions.find((c) => c.type === 'Applied')?.message, 'second call');
  });
  it('a deleted cluster whose spec names something unusable is cleaned up under the default names, then finalized', async () => {
    const { id: _id, href: _href, ...rest } = fixture;
    const cluster = await api.seedCluster({
      ...rest,
      generation: 3,
      deleted_time: new Date().toISOString(),
      spec: {
        ...fixture.spec,
        pullSecret: { data: VALID_PULL_SECRET, secretName: 'not a valid secret id!' },
      },
    });
    const executor = new WaitingExecutor();
    assert.equal(await pipeline(executor).handle(message(cluster.id, 3)), 'ack');
    assert.equal(executor.calls, 0, 'no executor work for names that cannot be used');
    assert.deepEqual(
      executor.finalized.map((t) => t.secretName),
      [`hyperfleet-${cluster.id}-pull-secret`],
      'what an earlier generation may have written under the default names is cleaned up',
    );
    assert.deepEqual(
      reports.filter((r) => r.clusterId === cluster.id),
      [{ clusterId: cluster.id, finalized: 'True' }],
    );
    assert.equal(api.getCluster(cluster.id), undefined, 'the API let the cluster go');
  });
  it('an event about a NodePool is acknowledged and counted ignored: no work, no report', async () => {
    const cluster = await seed();
    const executor = new WaitingExecutor();
    const metrics = new Metrics();
    const reportsBefore = reports.length;
    const event = {
      specversion: '1.0',
      id: 'np-1',
      source: 'test',
      type: 'com.redhat.hyperfleet.cluster.reconcile',
      data: { id: cluster.id, kind: 'NodePool', generation: 2 },
    };
    const disposition = await pipeline(executor, metrics).handle({
      id: 'm-np',
      body: Buffer.from(JSON.stringify(event)),
      attributes: {},
      deliveryAttempt: 1,
    });
    assert.equal(disposition, 'ack');
    assert.equal(executor.calls, 0);
    assert.equal(reports.length, reportsBefore);
    const results =
      (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'pullsecret_events_total')?.values ??
      [];
    assert.equal(results.find((v) => v.labels.result === 'ignored')?.value, 1);
  });
});
