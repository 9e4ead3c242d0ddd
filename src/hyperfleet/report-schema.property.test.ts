import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { adapterStatusReportSchema, describeIssues } from './schemas.js';
import { MANDATORY_CONDITIONS } from './types.js';

// A status report is checked once, by its schema, before it is sent: whatever is given, it either
// refuses with a message or passes a report with only the contract's fields, every mandatory
// condition, and no condition twice.

const RUNS = { numRuns: 400 };

const applied = {
  type: 'Applied',
  status: 'True',
  reason: 'SecretUpToDate',
  message: 'Pull secret unchanged in the gcp store',
};
const available = {
  type: 'Available',
  status: 'True',
  reason: 'SecretAvailable',
  message: 'Version 1 of projects/p/secrets/s is available',
};
const health = { type: 'Health', status: 'True', reason: 'Healthy', message: 'Adapter functioning normally' };
const report = {
  adapter: 'pullsecret',
  observed_generation: 3,
  observed_time: '2026-01-01T00:00:00.000Z',
  conditions: [applied, available, health],
  data: {
    secretName: 's',
    store: 'gcp',
    kubernetesSecret: { namespace: 'clusters-c1', name: 'c1-pull-secret' },
    secretVersion: undefined,
    outcome: 'unchanged',
  },
  metadata: { job_name: 'j', attempt: 1, started_time: '2026-01-01T00:00:00Z' },
};

const noise = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    undefined,
    '',
    'True',
    'False',
    'Unknown',
    'Applied',
    'Health',
    '2026-02-30T00:00:00Z',
    '2026-01-01T00:00:00',
    0,
    1,
    2 ** 31,
    1.5,
    null,
    [],
    {},
    [applied, applied, available, health],
  ),
);

/** `base` with some fields dropped, replaced with noise, or added. */
function mutated(base: Record<string, unknown>, extraKeys: string[]): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .array(
      fc.tuple(fc.constantFrom(...Object.keys(base), ...extraKeys), fc.oneof(fc.constant('drop'), noise)),
      { maxLength: 3 },
    )
    .map((edits) => {
      const out: Record<string, unknown> = { ...base };
      for (const [key, edit] of edits) {
        if (edit === 'drop') delete out[key];
        else
          Object.defineProperty(out, key, {
            value: edit,
            enumerable: true,
            writable: true,
            configurable: true,
          });
      }
      return out;
    });
}

const candidates = fc.oneof(
  mutated(report, ['extra', '__proto__']),
  mutated(applied, ['extra']).map((c) => ({ ...report, conditions: [c, available, health] })),
  fc
    .shuffledSubarray([applied, available, health, { type: 'Finalized', status: 'Unknown' }, applied])
    .map((conditions) => ({ ...report, conditions })),
  mutated(report.metadata, ['completed_time', 'duration', 'job_namespace', 'extra']).map((metadata) => ({
    ...report,
    metadata,
  })),
  mutated(report.data, ['__proto__', 'x']).map((data) => ({ ...report, data })),
);

const REPORT_KEYS = ['adapter', 'observed_generation', 'observed_time', 'conditions', 'data', 'metadata'];

test('the status report check refuses with a message, or passes a report the API takes', () => {
  fc.assert(
    fc.property(candidates, (candidate) => {
      const result = adapterStatusReportSchema.safeParse(candidate);
      if (!result.success) {
        assert.notEqual(describeIssues(result.error), '');
        return;
      }
      const keys = Object.keys(result.data);
      assert.deepEqual(
        keys,
        REPORT_KEYS.filter((k) => keys.includes(k)),
      );
      const types = result.data.conditions.map((c) => c.type);
      assert.equal(new Set(types).size, types.length);
      for (const type of MANDATORY_CONDITIONS) assert.ok(types.includes(type), type);
    }),
    RUNS,
  );
});

test('the status report check takes the reports the adapter sends and words every refusal', () => {
  for (const r of [
    report,
    { ...report, metadata: undefined },
    {
      adapter: 'pullsecret',
      observed_generation: 1,
      observed_time: '2026-01-01T00:00:00Z',
      conditions: [health, available, applied],
    },
  ]) {
    assert.deepStrictEqual(adapterStatusReportSchema.parse(r), r);
  }
  for (const bad of [
    { ...report, conditions: [applied, available] },
    { ...report, conditions: [applied, available, health, health] },
    { ...report, extra: 1 },
    { ...report, observed_generation: 0 },
  ]) {
    const result = adapterStatusReportSchema.safeParse(bad);
    assert.equal(result.success, false);
    assert.notEqual(result.error === undefined ? '' : describeIssues(result.error), '');
  }
});
