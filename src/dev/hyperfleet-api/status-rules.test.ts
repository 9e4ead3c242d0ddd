import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdapterStatusCreateRequest, Cluster } from '../../hyperfleet/types.js';
import { ProblemError } from './problem.js';
import { checkReportRules, discardReason, OBSERVED_TIME_LIMITS, toAdapterStatus } from './status-rules.js';

const NOW = new Date('2026-01-01T12:00:00Z');
const LIMITS = OBSERVED_TIME_LIMITS;

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

  it("bounds observed_time as hyperfleet-api does: 5 minutes ahead, 30 behind, in the API's words; zero time passes", () => {
    const detail = (observed_time: string): string | undefined => {
      try {
        checkReportRules(report({ observed_time }), NOW, LIMITS);
      } catch (err) {
        assert.ok(err instanceof ProblemError);
        assert.deepEqual(err.errors, []);
        return err.detail;
      }
      return undefined;
    };
    assert.equal(detail('2026-01-01T12:04:59Z'), undefined);
    assert.equal(detail('2026-01-01T12:05:01Z'), 'observed_time must not be more than 5m0s in the future');
    assert.equal(detail('2026-01-01T11:30:01Z'), undefined);
    assert.equal(detail('2026-01-01T11:29:59Z'), 'observed_time must not be more than 30m0s in the past');
    assert.equal(detail('0001-01-01T00:00:00Z'), undefined, 'the zero time is left to the discard rules');
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
    assert.equal(
      discardReason(report({ observed_time: '2026-01-01T11:58:00Z' }), cluster, stored),
      'stale-observed-time',
    );
    assert.equal(
      discardReason(report({ observed_time: '0001-01-01T00:00:00Z' }), cluster, undefined),
      'zero-observed-time',
    );
    const staleAndAhead = report({ observed_generation: 3 });
    assert.equal(
      discardReason(staleAndAhead, cluster, { ...stored, observed_generation: 4 }),
      'future-generation',
      'checked first',
    );
    const unknown = report({
      conditions: [
        { type: 'Applied', status: 'True' },
        { type: 'Available', status: 'Unknown' },
        { type: 'Health', status: 'True' },
      ],
    });
    assert.equal(
      discardReason(unknown, cluster, undefined),
      undefined,
      "an adapter's first report may say Unknown",
    );
    assert.equal(discardReason(unknown, cluster, stored), 'available-unknown');
    assert.equal(
      discardReason(report(), cluster, stored),
      undefined,
      'equal generation and time is stored again',
    );
    assert.equal(
      discardReason(report({ observed_generation: 1 }), cluster, undefined),
      undefined,
      'an older generation is fine when nothing is stored',
    );
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
