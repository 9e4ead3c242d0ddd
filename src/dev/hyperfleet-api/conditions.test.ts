import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdapterStatus, Cluster, ResourceCondition } from '../../hyperfleet/types.js';
import { aggregate, successfulConditionType } from './conditions.js';

const T0 = '2026-01-01T00:00:00.000Z';

function cluster(generation: number, conditions: ResourceCondition[] = [], deleted = false): Cluster {
  return {
    id: 'c',
    kind: 'Cluster',
    name: 'c-one',
    generation,
    labels: {},
    spec: {},
    status: { conditions },
    created_time: T0,
    updated_time: T0,
    ...(deleted ? { deleted_time: T0 } : {}),
  };
}

function status(
  adapter: string,
  generation: number,
  available: 'True' | 'False',
  finalized?: 'True' | 'False',
): AdapterStatus {
  const conditions = [
    { type: 'Applied', status: 'True' as const, last_transition_time: T0 },
    { type: 'Available', status: available, reason: `R${available}`, last_transition_time: T0 },
    { type: 'Health', status: 'True' as const, last_transition_time: T0 },
    ...(finalized === undefined ? [] : [{ type: 'Finalized', status: finalized, last_transition_time: T0 }]),
  ];
  return { adapter, observed_generation: generation, conditions, created_time: T0, last_report_time: T0 };
}

function byType(conditions: ResourceCondition[], type: string): ResourceCondition | undefined {
  return conditions.find((c) => c.type === type);
}

describe('cluster condition aggregation', () => {
  it('names adapter conditions {Adapter}Successful', () => {
    assert.equal(successfulConditionType('pullsecret'), 'PullsecretSuccessful');
    assert.equal(successfulConditionType('dns'), 'DnsSuccessful');
    assert.equal(successfulConditionType('pull-secret'), 'PullSecretSuccessful');
  });

  it('Reconciled needs every required adapter Available=True at the current generation', () => {
    const base = {
      requiredAdapters: ['pullsecret', 'dns'],
      lastKnownReconciledGeneration: undefined,
      now: T0,
    };
    const partial = aggregate({
      ...base,
      cluster: cluster(2),
      statuses: [status('pullsecret', 2, 'True'), status('dns', 1, 'True')],
    });
    assert.equal(byType(partial.conditions, 'Reconciled')?.status, 'False');
    assert.match(byType(partial.conditions, 'Reconciled')?.message ?? '', /dns/);
    assert.equal(byType(partial.conditions, 'LastKnownReconciled')?.status, 'False');
    const full = aggregate({
      ...base,
      cluster: cluster(2),
      statuses: [status('pullsecret', 2, 'True'), status('dns', 2, 'True')],
    });
    assert.equal(byType(full.conditions, 'Reconciled')?.status, 'True');
    assert.equal(byType(full.conditions, 'Reconciled')?.reason, 'ReconciledAll');
    assert.equal(full.lastKnownReconciledGeneration, 2);
    assert.deepEqual(
      full.conditions.map((c) => c.type),
      ['Reconciled', 'LastKnownReconciled', 'PullsecretSuccessful', 'DnsSuccessful'],
    );
  });

  it('LastKnownReconciled stays True while a newer generation is worked on', () => {
    const result = aggregate({
      cluster: cluster(3),
      statuses: [status('pullsecret', 2, 'True')],
      requiredAdapters: ['pullsecret'],
      lastKnownReconciledGeneration: 2,
      now: T0,
    });
    assert.equal(byType(result.conditions, 'Reconciled')?.status, 'False');
    assert.equal(byType(result.conditions, 'LastKnownReconciled')?.status, 'True');
    assert.equal(byType(result.conditions, 'LastKnownReconciled')?.observed_generation, 2);
  });

  it('keeps seeded conditions and the transition time of unchanged ones', () => {
    const seeded: ResourceCondition = {
      type: 'ValidationSuccessful',
      status: 'True',
      observed_generation: 1,
      created_time: T0,
      last_updated_time: T0,
      last_transition_time: T0,
    };
    const first = aggregate({
      cluster: cluster(1, [seeded]),
      statuses: [],
      requiredAdapters: ['pullsecret'],
      lastKnownReconciledGeneration: undefined,
      now: T0,
    });
    assert.deepEqual(byType(first.conditions, 'ValidationSuccessful'), seeded);
    const later = '2026-01-01T01:00:00.000Z';
    const second = aggregate({
      cluster: cluster(1, first.conditions),
      statuses: [],
      requiredAdapters: ['pullsecret'],
      lastKnownReconciledGeneration: undefined,
      now: later,
    });
    assert.equal(byType(second.conditions, 'Reconciled')?.last_transition_time, T0);
    assert.equal(byType(second.conditions, 'Reconciled')?.last_updated_time, later);
  });

  it('a deleted cluster is finalized once every required adapter reports Finalized=True at its generation', () => {
    const base = { requiredAdapters: ['pullsecret'], lastKnownReconciledGeneration: undefined, now: T0 };
    assert.equal(
      aggregate({
        ...base,
        cluster: cluster(3, [], true),
        statuses: [status('pullsecret', 2, 'False', 'True')],
      }).finalized,
      false,
    );
    assert.equal(
      aggregate({
        ...base,
        cluster: cluster(3, [], true),
        statuses: [status('pullsecret', 3, 'False', 'False')],
      }).finalized,
      false,
    );
    assert.equal(
      aggregate({
        ...base,
        cluster: cluster(3, [], true),
        statuses: [status('pullsecret', 3, 'False', 'True')],
      }).finalized,
      true,
    );
    assert.equal(
      aggregate({ ...base, cluster: cluster(3), statuses: [status('pullsecret', 3, 'False', 'True')] })
        .finalized,
      false,
    );
  });
});
