import { it } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIG_DURATION, durationMsSchema, formatDuration, parseDuration } from './duration.js';

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

it('accepts what each syntax allows, and nothing else', () => {
  assert.equal(parseDuration('1d', CONFIG_DURATION), 86_400_000);
  assert.equal(parseDuration('250ms', CONFIG_DURATION), 250);
  assert.equal(parseDuration('30', CONFIG_DURATION), undefined);
  const wholeSeconds = { units: ['s', 'm', 'h', 'd'], bare: 's', fractions: false } as const;
  assert.equal(parseDuration('720h', wholeSeconds), 2_592_000_000);
  assert.equal(parseDuration('1.5h', wholeSeconds), undefined);
  assert.equal(parseDuration('500ms', wholeSeconds), undefined);
});

it('checks configuration durations with the rule given', () => {
  const schema = durationMsSchema('must be a duration such as 30m');
  assert.equal(schema.parse('30m'), 1_800_000);
  assert.equal(schema.parse(1500), 1500);
  assert.equal(schema.safeParse('soon').error?.issues[0]?.message, 'must be a duration such as 30m');
});
