import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PullSecretError } from '../errors/index.js';
import { clusterPhase, decideRun } from './transfer-fleet.js';
import { TransferHealth } from './transfer-health.js';

const HOUR = 3_600_000;
const unreachable = {
  kind: 'unreachable' as const,
  attempts: 1,
  message: 'the account service answered 503',
  error: new PullSecretError('ACCOUNT_SERVICE_UNAVAILABLE', 'x'),
};

describe('TransferHealth', () => {
  it('re-checks five 5xx with the interval/24 doubling backoff, then turns Degraded, then heals', () => {
    const health = new TransferHealth(12 * HOUR);
    const delays = [1, 2, 3, 4, 5].map(() => health.note('c1', unreachable));
    assert.deepEqual(
      delays.map((n) => n.retryInMs),
      [0.5, 1, 2, 4, 8].map((h) => h * HOUR),
    );
    assert.ok(delays.every((n) => !n.report));
    assert.equal(health.problem('c1'), undefined);
    assert.deepEqual(health.note('c1', unreachable), { report: true });
    assert.equal(health.problem('c1')?.reason, 'AccountServiceUnavailable');
    assert.match(
      health.problem('c1')?.message ?? '',
      /^Degraded: ownership transfer checks failed 6 times in a row: the account service answered 503$/,
    );
    assert.deepEqual(
      health.note('c1', unreachable),
      { report: true },
      'still degraded: said again (an event handled elsewhere may have reported it True)',
    );
    assert.equal(health.problem('c2'), undefined, 'per cluster');
    assert.deepEqual(health.note('c1', { kind: 'none' }), { report: true });
    assert.equal(health.problem('c1'), undefined);
    assert.equal(health.note('c1', unreachable).retryInMs, 0.5 * HOUR, 'the count starts again');
  });

  it('derives a Degraded cluster from its reported status once, so its recovery is reported', () => {
    const health = new TransferHealth(12 * HOUR);
    assert.equal(health.needsRestore('c1'), true);
    health.restore('c1', { reason: 'AccountServiceUnavailable', message: 'Degraded: as reported' });
    assert.equal(health.needsRestore('c1'), false);
    assert.equal(health.problem('c1')?.message, 'Degraded: as reported');
    assert.deepEqual(health.note('c1', { kind: 'none' }), { report: true }, 'the recovery is reported');
    health.restore('c2', undefined);
    assert.equal(health.note('c2', unreachable).retryInMs, 0.5 * HOUR, 'reported healthy: counted afresh');
    health.clear();
    assert.equal(health.needsRestore('c2'), true, 'a new leadership derives again');
  });

  it('forgets a deleted cluster', () => {
    const health = new TransferHealth(24_000);
    for (let i = 0; i < 6; i++) health.note('c1', unreachable);
    assert.ok(health.problem('c1'));
    health.forget('c1');
    assert.equal(health.problem('c1'), undefined);
    assert.equal(health.note('c1', unreachable).retryInMs, 1000);
  });
});

describe('clusterPhase', () => {
  it('is deterministic, in [0, 1), and spreads ids evenly enough', () => {
    const id = '019466a0-2222-7000-8000-000000000002';
    assert.equal(clusterPhase(id), clusterPhase(id));
    const buckets = new Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++) {
      const phase = clusterPhase(`019466a0-2222-7000-8000-${String(i).padStart(12, '0')}`);
      assert.ok(phase >= 0 && phase < 1);
      buckets[Math.floor(phase * 10)] = (buckets[Math.floor(phase * 10)] ?? 0) + 1;
    }
    // 1,000 expected per tenth of the interval; never a pile-up.
    for (const n of buckets) assert.ok(n > 850 && n < 1150, `bucket of ${n}`);
  });
});

describe('decideRun', () => {
  it('plans the next run of a cluster by the outcome table: retry a retryable unread cluster sooner', () => {
    assert.equal(decideRun({ kind: 'gone' }), 'gone');
    assert.equal(decideRun({ kind: 'superseded' }), 'superseded');
    assert.equal(decideRun({ kind: 'failed', error: new PullSecretError('API_UNAVAILABLE', 'x') }), 'retry');
    assert.equal(decideRun({ kind: 'failed', error: new PullSecretError('CONFIG_INVALID', 'x') }), 'skipped');
    assert.equal(decideRun({ kind: 'skipped', message: 'preconditions not met' }), 'skipped');
  });
});
