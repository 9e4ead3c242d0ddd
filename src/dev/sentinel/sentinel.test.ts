import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { decodeClusterEvent } from '../../events/cluster-event.js';
import type { Cluster, ClusterList, ResourceCondition } from '../../hyperfleet/types.js';
import { createLogger } from '../../observability/logger.js';
import { Sentinel } from './sentinel.js';

const silent = createLogger({
  level: 'warn',
  destination: new Writable({ write: (_c, _e, done) => done() }),
});
const T0 = Date.parse('2026-01-01T10:00:00Z');

function cluster(
  n: number,
  generation: number,
  reconciled?: { status: 'True' | 'False'; at: number },
): Cluster {
  const id = `019466a0-8f8e-7abc-9def-${String(n).padStart(12, '0')}`;
  const conditions: ResourceCondition[] =
    reconciled === undefined
      ? []
      : [
          {
            type: 'Reconciled',
            status: reconciled.status,
            observed_generation: generation,
            created_time: '2026-01-01T00:00:00Z',
            last_updated_time: new Date(reconciled.at).toISOString(),
            last_transition_time: '2026-01-01T00:00:00Z',
          },
        ];
  return {
    id,
    kind: 'Cluster',
    name: `c${n}`,
    generation,
    labels: {},
    spec: {},
    status: { conditions },
    created_time: '2026-01-01T00:00:00Z',
    updated_time: '2026-01-01T00:00:00Z',
  };
}

/** A paging API over a mutable list, counting requests. */
function fakeApi(clusters: Cluster[]) {
  const requests: Array<{ page: number; size: number }> = [];
  return {
    requests,
    listClusters: async (paging: { page?: number; size?: number } = {}): Promise<ClusterList> => {
      const page = paging.page ?? 1;
      const size = paging.size ?? 20;
      requests.push({ page, size });
      const items = clusters.slice((page - 1) * size, page * size);
      return { page, size: items.length, total: clusters.length, items };
    },
  };
}

function collector() {
  const bodies: Buffer[] = [];
  return { bodies, publish: async (body: Buffer) => void bodies.push(body) };
}

describe('Sentinel poller', () => {
  it('reads every page and publishes one valid reconcile event per cluster that needs one', async () => {
    const clusters = Array.from({ length: 7 }, (_, i) => cluster(i + 1, 1));
    clusters.push(cluster(8, 1, { status: 'True', at: T0 - 1000 }));
    const api = fakeApi(clusters);
    const out = collector();
    const sentinel = new Sentinel({
      api,
      publisher: out,
      intervals: { pollIntervalMs: 10, debounceMs: 5000, maxAgeMs: 60_000 },
      logger: silent,
      pageSize: 3,
      now: () => T0,
    });
    const result = await sentinel.pollOnce();
    assert.deepEqual(api.requests, [
      { page: 1, size: 3 },
      { page: 2, size: 3 },
      { page: 3, size: 3 },
    ]);
    assert.deepEqual(result, { listed: 8, published: 7, failed: 0, reasons: { 'new-resource': 7 } });
    const events = out.bodies.map((b) => decodeClusterEvent(b));
    assert.deepEqual(
      events.map((e) => e.clusterId).sort(),
      clusters
        .slice(0, 7)
        .map((c) => c.id)
        .sort(),
    );
    assert.ok(
      events.every(
        (e) =>
          e.type === 'com.redhat.hyperfleet.cluster.reconcile' &&
          e.source === 'hyperfleet-sentinel' &&
          e.generation === 1,
      ),
    );
    assert.equal(events[0]?.href, `/api/hyperfleet/v1/clusters/${events[0]?.clusterId}`);
  });

  it('does not send again within the debounce interval; a new generation goes out at once', async () => {
    let now = T0;
    const clusters = [cluster(1, 1)];
    const out = collector();
    const sentinel = new Sentinel({
      api: fakeApi(clusters),
      publisher: out,
      intervals: { pollIntervalMs: 10, debounceMs: 5000, maxAgeMs: 60_000 },
      logger: silent,
      now: () => now,
    });
    await sentinel.pollOnce();
    now += 1000;
    assert.equal((await sentinel.pollOnce()).published, 0);
    clusters[0] = cluster(1, 2);
    assert.deepEqual((await sentinel.pollOnce()).reasons, { 'generation-changed': 1 });
    now += 5000;
    assert.deepEqual((await sentinel.pollOnce()).reasons, { 'not-reconciled': 1 });
    assert.equal(out.bodies.length, 3);
  });

  it('a failed publish is counted and retried on the next poll', async () => {
    let fail = true;
    const publisher = {
      publish: async () => {
        if (fail) throw new Error('down');
      },
    };
    const sentinel = new Sentinel({
      api: fakeApi([cluster(1, 1)]),
      publisher,
      intervals: { pollIntervalMs: 10, debounceMs: 5000, maxAgeMs: 60_000 },
      logger: silent,
      now: () => T0,
    });
    assert.deepEqual(await sentinel.pollOnce(), { listed: 1, published: 0, failed: 1, reasons: {} });
    fail = false;
    assert.equal((await sentinel.pollOnce()).published, 1);
  });

  it('polls on its interval until stopped, surviving API failures', async () => {
    let calls = 0;
    const api = {
      listClusters: async (): Promise<ClusterList> => {
        calls += 1;
        if (calls === 1) throw new Error('API down');
        return { page: 1, size: 0, total: 0, items: [] };
      },
    };
    const sentinel = new Sentinel({
      api,
      publisher: collector(),
      intervals: { pollIntervalMs: 5, debounceMs: 5000, maxAgeMs: 60_000 },
      logger: silent,
    });
    sentinel.start();
    while (calls < 3) await new Promise((r) => setTimeout(r, 5));
    await sentinel.stop();
    const after = calls;
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(calls, after, 'no poll after stop');
    assert.equal(sentinel.stats.failedPolls, 1);
  });
});
