import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdapterStatusCreateRequest, Cluster } from '../../hyperfleet/types.js';
import { ProblemError } from './problem.js';
import { checkReportRules, discardReason, toAdapterStatus } from './status-rules.js';

const NOW = new Date('2026-01-01T12:00:00Z');
const LIMITS = { maxClockSkewMs: 60_000, maxObservedAgeMs: 3_600_000 };

function report(overrides: Partial<AdapterStatusCreateRequest> = {}): AdapterStatusCreateRequest {
  return {
    adapter: 'pullsecret',
    observed_generation: 2,
    observed_time: '2026-01-01T11:59:00Z',
    conditions: [
      { type: 'Applied', status: 'True' },
      { type: 'Available', status: 'True' },
      { type: 'Health', status: 'True' },
    ],
    ...overrides,
  };
}

function fields(fn: () => void): string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ProblemError);
    assert.equal(err.kind, 'validation');
    return err.errors.map((e) => `${e.field}:${e.constraint ?? ''}`);
  }
  return [];
}

const cluster = { generation: 2 } as Cluster;

describe('status report rules', () => {
  it('accepts a well-formed report', () => {
    assert.deepEqual(
      fields(() => checkReportRules(report(), NOW, LIMITS)),
      [],
    );
  });

  it('requires Applied, Available and Health, once each', () => {
    const conditions = [
      { type: 'Available', status: 'True' as const },
      { type: 'Available', status: 'False' as const },
    ];
    assert.deepEqual(
      fields(() => checkReportRules(report({ conditions }), NOW, LIMITS)),
      ['conditions:required', 'conditions:required', 'conditions[1].type:unique'],
    );
  });

  it('bounds observed_time: a small skew ahead, a window behind', () => {
    assert.deepEqual(
      fields(() => checkReportRules(report({ observed_time: '2026-01-01T12:00:59Z' }), NOW, LIMITS)),
      [],
    );
    assert.deepEqual(
      fields(() => checkReportRules(report({ observed_time: '2026-01-01T12:01:01Z' }), NOW, LIMITS)),
      ['observed_time:max'],
    );
    assert.deepEqual(
      fields(() => checkReportRules(report({ observed_time: '2026-01-01T10:59:59Z' }), NOW, LIMITS)),
      ['observed_time:min'],
    );
  });

  it('refuses odd adapter names and generation 0', () => {
    assert.deepEqual(
      fields(() => checkReportRules(report({ adapter: 'Pull Secret', observed_generation: 0 }), NOW, LIMITS)),
      ['adapter:pattern', 'observed_generation:min'],
    );
  });

  it('discards stale, future, out-of-order and repeated Available=Unknown reports', () => {
    const stored = toAdapterStatus(report(), undefined, NOW);
    assert.equal(discardReason(report({ observed_generation: 1 }), cluster, stored), 'stale-generation');
    assert.equal(discardReason(report({ observed_generation: 3 }), cluster, stored), 'future-generation');
    assert.equal(discardReason(report({ observed_time: '2026-01-01T11:58:00Z' }), cluster, stored), 'stale-observed-time');
    const unknown = report({
      conditions: [
        { type: 'Applied', status: 'True' },
        { type: 'Available', status: 'Unknown' },
        { type: 'Health', status: 'True' },
      ],
    });
    assert.equal(discardReason(unknown, cluster, undefined), undefined, "an adapter's first report may say Unknown");
    assert.equal(discardReason(unknown, cluster, stored), 'available-unknown');
    assert.equal(discardReason(report(), cluster, stored), undefined, 'equal generation and time is stored again');
    assert.equal(discardReason(report({ observed_generation: 1 }), cluster, undefined), undefined, 'an older generation is fine when nothing is stored');
  });

  it('moves last_transition_time only when a condition changes status', () => {
    const first = toAdapterStatus(report(), undefined, NOW);
    const same = toAdapterStatus(report({ observed_time: '2026-01-01T11:59:30Z' }), first, NOW);
    assert.equal(same.conditions[1]?.last_transition_time, '2026-01-01T11:59:00.000Z');
    assert.equal(same.last_report_time, '2026-01-01T11:59:30.000Z');
    assert.equal(same.created_time, first.created_time);
    const flipped = toAdapterStatus(
      report({
        observed_time: '2026-01-01T11:59:40Z',
        conditions: [
          { type: 'Applied', status: 'True' },
          { type: 'Available', status: 'False' },
          { type: 'Health', status: 'True' },
        ],
      }),
      same,
      NOW,
    );
    assert.equal(flipped.conditions[0]?.last_transition_time, '2026-01-01T11:59:00.000Z');
    assert.equal(flipped.conditions[1]?.last_transition_time, '2026-01-01T11:59:40.000Z');
  });
});
