import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { quickStatusReport } from './report-check.js';
import { adapterStatusReportSchema } from './schemas.js';

// The fast path of the status report check must never accept what the schema refuses, and must build
// exactly the schema's output (same fields, same order, `undefined` kept where the schema keeps it).

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

test('the fast status report check accepts only what the schema accepts, with the same output', () => {
  fc.assert(
    fc.property(candidates, (candidate) => {
      const fast = quickStatusReport(candidate);
      if (fast === undefined) return;
      const schema = adapterStatusReportSchema.safeParse(candidate);
      assert.ok(schema.success, `fast path accepted what the schema refuses: ${JSON.stringify(candidate)}`);
      assert.deepStrictEqual(fast, schema.data);
      assert.equal(JSON.stringify(fast), JSON.stringify(schema.data));
    }),
    RUNS,
  );
});

test('the fast status report check takes the reports the adapter sends; the schema words every refusal', () => {
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
    const fast = quickStatusReport(r);
    assert.ok(fast !== undefined);
    assert.deepStrictEqual(fast, adapterStatusReportSchema.parse(r));
  }
  for (const bad of [
    { ...report, conditions: [applied, available] },
    { ...report, conditions: [applied, available, health, health] },
    { ...report, extra: 1 },
    { ...report, observed_generation: 0 },
  ]) {
    assert.equal(quickStatusReport(bad), undefined);
    assert.equal(adapterStatusReportSchema.safeParse(bad).success, false);
  }
});
