import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { clusterSchema, describeIssues } from './schemas.js';

// The cluster answer is checked once, by its schema: whatever comes in, it either refuses with a
// message or gives the known fields in the schema's order, unknown ones dropped, `labels` defaulting
// to `{}`. Answers go through JSON, as from the API.

const RUNS = { numRuns: 400 };
const TIME = '2026-01-01T00:00:00Z';

const condition = {
  type: 'ValidationSuccessful',
  status: 'True',
  reason: 'Ok',
  observed_generation: 1,
  created_time: TIME,
  last_updated_time: '2026-01-01T00:00:00.123+02:00',
  last_transition_time: TIME,
};
const cluster = {
  id: '019466a0-8f8e-7abc-9def-0123456789ab',
  kind: 'Cluster',
  href: '/api/hyperfleet/v1/clusters/019466a0-8f8e-7abc-9def-0123456789ab',
  name: 'c1',
  generation: 3,
  labels: { env: 'prod' },
  spec: { provider: 'gcp', pullSecret: { data: '{"auths":{}}' } },
  status: { conditions: [condition] },
  created_time: TIME,
  updated_time: TIME,
  created_by: 'someone',
};

/** Noise for one field: other types, odd strings and dates, nested JSON. */
const noise = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    '',
    'True',
    'False',
    'Unknown',
    '2026-02-30T00:00:00Z',
    '2026-01-01T00:00:00',
    '2026-01-01 00:00:00Z',
    TIME,
    0,
    1,
    -1,
    2 ** 31,
    1.5,
    null,
    [],
    {},
    { __proto__: null },
  ),
);

/** Takes `base` and, for some of its fields, drops them, replaces them with noise, or adds unknown ones. */
function mutated(base: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(base);
  return fc
    .record({
      edits: fc.array(
        fc.tuple(
          fc.constantFrom(...keys, 'extra', '__proto__', 'deleted_time', 'labels'),
          fc.oneof(fc.constant('drop'), noise),
        ),
        { maxLength: 3 },
      ),
    })
    .map(({ edits }) => {
      const out: Record<string, unknown> = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
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
  mutated(cluster),
  mutated(condition).map((c) => ({ ...cluster, status: { conditions: [condition, c] } })),
  mutated(cluster.labels).map((labels) => ({ ...cluster, labels })),
  mutated(cluster.spec).map((spec) => ({ ...cluster, spec })),
);

const KNOWN = Object.keys(clusterSchema.shape);

test('the cluster check refuses with a message, or keeps only the known fields in order', () => {
  fc.assert(
    fc.property(candidates, (candidate) => {
      const json: unknown = JSON.parse(JSON.stringify(candidate));
      const result = clusterSchema.safeParse(json);
      if (!result.success) {
        assert.notEqual(describeIssues(result.error), '');
        return;
      }
      const keys = Object.keys(result.data);
      assert.deepEqual(
        keys,
        KNOWN.filter((k) => keys.includes(k)),
      );
      assert.equal(Object.getPrototypeOf(result.data.labels), Object.prototype);
      assert.ok(Number.isSafeInteger(result.data.generation) && result.data.generation >= 1);
      assert.deepStrictEqual(JSON.parse(JSON.stringify(result.data)), result.data);
    }),
    RUNS,
  );
});

test('the cluster check takes the usual answers and refuses odd ones', () => {
  const withoutOptional = {
    ...cluster,
    labels: undefined,
    href: undefined,
    created_by: undefined,
    deleted_time: TIME,
    extra: { x: 1 },
  };
  for (const c of [cluster, withoutOptional, { ...cluster, status: { conditions: [] } }]) {
    const json = JSON.parse(JSON.stringify(c)) as Record<string, unknown>;
    const { extra: _extra, ...known } = json;
    assert.deepStrictEqual(clusterSchema.parse(json), { ...known, labels: known.labels ?? {} });
  }
  for (const bad of [
    { ...cluster, generation: 0 },
    { ...cluster, created_time: '2026-02-30T00:00:00Z' },
    { ...cluster, labels: { a: 1 } },
    [],
  ]) {
    assert.equal(clusterSchema.safeParse(JSON.parse(JSON.stringify(bad))).success, false);
  }
});
