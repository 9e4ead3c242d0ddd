import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { AdapterStatusReport, Cluster, ResourceCondition } from '../hyperfleet/types.js';
import { createLogger } from '../observability/logger.js';
import { reconcileEventBody } from './sentinel/reconcile-event.js';
import { HOLD_LABEL, UpstreamAdapters } from './upstream-adapters.js';

const silent = createLogger({
  level: 'error',
  destination: new Writable({ write: (_c, _e, done) => done() }),
});
const ID = '019466a0-8f8e-7abc-9def-0123456789ab';
const T = '2026-01-01T10:00:00Z';

function cluster(
  extra: Partial<Cluster> = {},
  done: Array<[string, 'True' | 'False', number]> = [],
): Cluster {
  const conditions: ResourceCondition[] = done.map(([type, status, generation]) => ({
    type,
    status,
    observed_generation: generation,
    created_time: T,
    last_updated_time: T,
    last_transition_time: T,
  }));
  return {
    id: ID,
    kind: 'Cluster',
    name: 'c1',
    generation: 2,
    labels: {},
    spec: {},
    status: { conditions },
    created_time: T,
    updated_time: T,
    ...extra,
  };
}

function fakeApi(current: Cluster | undefined) {
  const reports: AdapterStatusReport[] = [];
  return {
    reports,
    getCluster: async () => current,
    putStatus: async (_id: string, report: AdapterStatusReport) => {
      reports.push(report);
      return 'stored' as const;
    },
  };
}

describe('simulated upstream adapters', () => {
  it('report Available=True at the current generation for those not done yet', async () => {
    const api = fakeApi(
      cluster({}, [
        ['ValidationSuccessful', 'True', 2],
        ['DnsSuccessful', 'True', 1],
      ]),
    );
    await new UpstreamAdapters(api, silent).reconcile(ID);
    assert.deepEqual(api.reports.map((r) => r.adapter).sort(), ['dns', 'placement']);
    assert.ok(
      api.reports.every(
        (r) =>
          r.observed_generation === 2 && r.conditions.find((c) => c.type === 'Available')?.status === 'True',
      ),
    );
  });

  it('a held adapter reports Available=False, once per generation', async () => {
    const api = fakeApi(
      cluster({ labels: { [HOLD_LABEL]: 'dns, placement' } }, [
        ['ValidationSuccessful', 'True', 2],
        ['DnsSuccessful', 'False', 2],
      ]),
    );
    await new UpstreamAdapters(api, silent).reconcile(ID);
    assert.deepEqual(
      api.reports.map((r) => [r.adapter, r.conditions.find((c) => c.type === 'Available')?.status]),
      [['placement', 'False']],
    );
  });

  it('leave deleted and missing clusters alone', async () => {
    for (const current of [cluster({ deleted_time: T }), undefined]) {
      const api = fakeApi(current);
      await new UpstreamAdapters(api, silent).reconcile(ID);
      assert.equal(api.reports.length, 0);
    }
  });

  it('see each event before the next publisher, and never stop it', async () => {
    const order: string[] = [];
    const failing = {
      getCluster: async () => Promise.reject(new Error('API down')),
      putStatus: async () => 'stored' as const,
    };
    const next = { publish: async () => void order.push('adapter') };
    await new UpstreamAdapters(failing, silent)
      .inFrontOf(next)
      .publish(reconcileEventBody({ id: ID, generation: 2 }));
    assert.deepEqual(order, ['adapter']);
  });
});
