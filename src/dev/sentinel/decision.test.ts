import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Cluster, ResourceCondition } from '../../hyperfleet/types.js';
import { decide, viewOf, type ClusterView } from './decision.js';

const intervals = { debounceMs: 10_000, maxAgeMs: 1_800_000 };
const T0 = Date.parse('2026-01-01T10:00:00Z');

function view(
  generation: number,
  reconciled?: { status: 'True' | 'False'; gen?: number; ageMs?: number },
  everReconciled = false,
): ClusterView {
  return {
    generation,
    everReconciled,
    ...(reconciled === undefined
      ? {}
      : {
          reconciled: {
            status: reconciled.status,
            observedGeneration: reconciled.gen ?? generation,
            lastUpdatedMs: T0 - (reconciled.ageMs ?? 0),
          },
        }),
  };
}

describe('Sentinel decision rules', () => {
  it('a new resource is sent at once, with or without an aggregated condition', () => {
    assert.deepEqual(decide(view(1), undefined, T0, intervals), { publish: true, reason: 'new-resource' });
    assert.deepEqual(decide(view(1, { status: 'False' }), undefined, T0, intervals), {
      publish: true,
      reason: 'new-resource',
    });
  });

  it('a generation ahead of the reconciled one is sent at once', () => {
    assert.deepEqual(decide(view(2, { status: 'False' }, true), undefined, T0, intervals), {
      publish: true,
      reason: 'generation-changed',
    });
    assert.deepEqual(decide(view(2, { status: 'True', gen: 1 }, true), undefined, T0, intervals), {
      publish: true,
      reason: 'generation-changed',
    });
    // An event went out for generation 1 a moment ago; generation 2 does not wait for the debounce.
    assert.deepEqual(
      decide(view(2, { status: 'False' }, true), { generation: 1, atMs: T0 - 10 }, T0, intervals),
      { publish: true, reason: 'generation-changed' },
    );
  });

  it('once sent, an unreconciled cluster waits for the debounce interval after the last activity', () => {
    const sent = { generation: 1, atMs: T0 - 9_999 };
    assert.deepEqual(decide(view(1, { status: 'False', ageMs: 60_000 }), sent, T0, intervals), {
      publish: false,
      reason: 'debounced',
    });
    assert.deepEqual(
      decide(
        view(1, { status: 'False', ageMs: 60_000 }),
        { generation: 1, atMs: T0 - 10_000 },
        T0,
        intervals,
      ),
      { publish: true, reason: 'not-reconciled' },
    );
    // A status report (e.g. "skipped") restarts the interval, as the upstream Sentinel's last_updated_time does.
    assert.deepEqual(
      decide(view(1, { status: 'False', ageMs: 5_000 }), { generation: 1, atMs: T0 - 60_000 }, T0, intervals),
      { publish: false, reason: 'debounced' },
    );
  });

  it('a reconciled cluster is left alone until its status is older than the max age', () => {
    assert.deepEqual(decide(view(3, { status: 'True', ageMs: 1_799_999 }), undefined, T0, intervals), {
      publish: false,
      reason: 'up-to-date',
    });
    assert.deepEqual(decide(view(3, { status: 'True', ageMs: 1_800_000 }), undefined, T0, intervals), {
      publish: true,
      reason: 'max-age',
    });
    // The resync event itself counts: no second event while the adapter's answer is on its way.
    assert.deepEqual(
      decide(
        view(3, { status: 'True', ageMs: 3_600_000 }),
        { generation: 3, atMs: T0 - 1_000 },
        T0,
        intervals,
      ),
      { publish: false, reason: 'up-to-date' },
    );
  });

  it('reads the view from the API cluster conditions', () => {
    const condition = (type: string, status: 'True' | 'False', generation: number): ResourceCondition => ({
      type,
      status,
      observed_generation: generation,
      created_time: '2026-01-01T09:00:00Z',
      last_updated_time: '2026-01-01T09:59:00Z',
      last_transition_time: '2026-01-01T09:00:00Z',
    });
    const cluster: Pick<Cluster, 'generation' | 'status'> = {
      generation: 2,
      status: {
        conditions: [condition('Reconciled', 'False', 2), condition('LastKnownReconciled', 'True', 1)],
      },
    };
    assert.deepEqual(viewOf(cluster), {
      generation: 2,
      everReconciled: true,
      reconciled: {
        status: 'False',
        observedGeneration: 2,
        lastUpdatedMs: Date.parse('2026-01-01T09:59:00Z'),
      },
    });
    assert.deepEqual(viewOf({ generation: 1, status: { conditions: [] } }), {
      generation: 1,
      everReconciled: false,
    });
  });

  it('an unreadable status time counts as long ago, never as now', () => {
    const broken: ClusterView = {
      generation: 1,
      everReconciled: true,
      reconciled: { status: 'True', observedGeneration: 1, lastUpdatedMs: Number.NaN },
    };
    assert.deepEqual(decide(broken, undefined, T0, intervals), { publish: true, reason: 'max-age' });
  });
});
