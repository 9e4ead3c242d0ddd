import { it } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, parseDuration } from './duration.js';

it('parses and formats durations', () => {
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('2s'), 2000);
  assert.equal(parseDuration('3'), 3000);
  assert.equal(parseDuration('1.5m'), 90_000);
  assert.equal(parseDuration('1h'), 3_600_000);
  for (const bad of ['', '-1s', '1d', 'soon', '1e3']) assert.equal(parseDuration(bad), undefined, bad);
  assert.deepEqual([500, 10_000, 1_500, 90_000, 1_800_000, 7_200_000].map(formatDuration), [
    '500ms',
    '10s',
    '1.5s',
    '1.5m',
    '30m',
    '2h',
  ]);
});
