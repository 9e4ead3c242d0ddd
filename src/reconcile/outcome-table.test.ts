import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PullSecretError } from '../errors/index.js';
import { decide, jobResultOf, runOutcome } from './outcome-table.js';
import type { WorkTarget } from './outcome.js';

const target: WorkTarget = {
  store: 'local',
  provider: '*',
  settings: {},
  secretName: 's',
  namespace: 'ns',
  kubernetesSecretName: 'k',
};
const transient = new PullSecretError('STORE_UNAVAILABLE', 'down');
const lasting = new PullSecretError('PULL_SECRET_INVALID', 'bad');

test('events that do no work: ack, reject or retry without a report', () => {
  assert.deepEqual(decide({ kind: 'ignored' }), { disposition: 'ack', event: 'ignored', report: false });
  assert.deepEqual(decide({ kind: 'invalid' }), { disposition: 'reject', event: 'invalid', report: false });
  assert.deepEqual(decide({ kind: 'gone' }), { disposition: 'ack', event: 'gone', report: false });
  assert.deepEqual(decide({ kind: 'superseded' }), {
    disposition: 'ack',
    event: 'superseded',
    report: false,
  });
  assert.deepEqual(decide({ kind: 'stopped' }), { disposition: 'retry', report: false });
  assert.equal(decide({ kind: 'unread', error: transient }).disposition, 'retry');
  assert.equal(decide({ kind: 'unread', error: lasting }).disposition, 'ack');
});

test('work outcomes are reported; a transient failure and an unconfirmed cleanup retry', () => {
  assert.deepEqual(decide({ kind: 'failed', error: transient, target }), {
    disposition: 'retry',
    event: 'failed',
    report: true,
  });
  assert.equal(decide({ kind: 'failed', error: lasting, target }).disposition, 'ack');
  assert.equal(decide({ kind: 'finalize-failed', error: transient, target }).disposition, 'retry');
  const running = { kind: 'job-running', target, jobName: 'j', jobNamespace: 'n' } as const;
  assert.deepEqual(decide(running), { disposition: 'ack', event: 'applied', report: true });
  assert.equal(jobResultOf(running), undefined);
  assert.equal(decide({ ...running, kind: 'job-failed', message: 'm' }).event, 'failed');
  assert.equal(jobResultOf({ ...running, kind: 'job-failed', message: 'm' }), 'failure');
  const skipped = { kind: 'skipped', precondition: 'p', message: 'm' } as const;
  assert.deepEqual(decide(skipped), { disposition: 'ack', event: 'skipped', report: true });
  assert.equal(jobResultOf(skipped), 'skipped');
  const finalized = { kind: 'finalized', kubernetesRemoved: true, cloud: 'deleted' } as const;
  assert.deepEqual(decide(finalized), { disposition: 'ack', event: 'finalized', report: true });
  assert.equal(jobResultOf(finalized), undefined);
});

test('a task run that ended before its work (transfer check, entitlement refresh) decides as an event would', () => {
  assert.deepEqual(decide(runOutcome({ kind: 'gone' })), {
    disposition: 'ack',
    event: 'gone',
    report: false,
  });
  assert.equal(decide(runOutcome({ kind: 'superseded' })).event, 'superseded');
  assert.deepEqual(decide(runOutcome({ kind: 'failed', error: transient })), {
    disposition: 'retry',
    event: 'failed',
    report: false,
  });
  assert.equal(decide(runOutcome({ kind: 'failed', error: lasting })).disposition, 'ack');
  assert.equal(decide(runOutcome({ kind: 'skipped', message: 'preconditions' })).event, 'skipped');
});
