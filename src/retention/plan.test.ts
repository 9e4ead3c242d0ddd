import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEFAULT_RETENTION_POLICY, planRetention, type RetentionPlan, type VersionView } from './plan.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const policy = DEFAULT_RETENTION_POLICY;

/** Versions 1..n written `gapsMs` apart from T0, states as given (ENABLED by default); newest first, as `describe` lists them. */
function versions(gapsMs: number[], states: Record<string, VersionView['state']> = {}): VersionView[] {
  let at = T0;
  return gapsMs
    .map((gap, i) => {
      at += gap;
      const version = String(i + 1);
      return { version, state: states[version] ?? 'ENABLED', createdTime: new Date(at).toISOString() };
    })
    .reverse();
}

/** The versions once `plan` is applied. */
function apply(list: VersionView[], plan: RetentionPlan): VersionView[] {
  return list.map((v) =>
    plan.destroy.includes(v.version)
      ? { ...v, state: 'DESTROYED' }
      : plan.disable.includes(v.version)
        ? { ...v, state: 'DISABLED' }
        : v,
  );
}

describe('planRetention: grace, disable, destroy', () => {
  // v1 at T0, v2 at T0 + 1 h: v1 was superseded at T0 + 1 h.
  const two = versions([0, HOUR]);

  test('the previous version stays enabled through its grace', () => {
    const plan = planRetention(two, T0 + HOUR + 23 * HOUR, policy);
    assert.deepEqual(plan.disable, []);
    assert.deepEqual(plan.destroy, []);
    assert.equal(plan.current, '2');
    assert.deepEqual(plan.previous, {
      version: '1',
      state: 'ENABLED',
      graceEndsAt: new Date(T0 + 25 * HOUR).toISOString(),
    });
    assert.equal(plan.nextDueAt, T0 + 25 * HOUR);
  });

  test('is disabled once the grace ends, and due for destruction after the retention', () => {
    const plan = planRetention(two, T0 + 25 * HOUR, policy);
    assert.deepEqual(plan.disable, ['1']);
    assert.deepEqual(plan.destroy, []);
    assert.equal(plan.previous?.state, 'DISABLED');
    assert.equal(plan.nextDueAt, T0 + HOUR + 30 * DAY);
  });

  test('is destroyed once the retention ends, disabled or not', () => {
    for (const state of ['ENABLED', 'DISABLED'] as const) {
      const plan = planRetention(versions([0, HOUR], { '1': state }), T0 + HOUR + 30 * DAY, policy);
      assert.deepEqual(plan.destroy, ['1'], state);
      assert.deepEqual(plan.disable, [], state);
      assert.equal(plan.previous, undefined);
      assert.equal(plan.nextDueAt, undefined);
      assert.equal(plan.remaining, 1);
    }
  });

  test('each version is timed from when it was superseded, not from when it was written', () => {
    // v1 at T0, v2 at T0 + 40 days: v1 is old but was replaced just now.
    const plan = planRetention(versions([0, 40 * DAY]), T0 + 40 * DAY + HOUR, policy);
    assert.deepEqual(plan.disable, []);
    assert.deepEqual(plan.destroy, []);
  });

  test('the current version is never touched, however old', () => {
    const plan = planRetention(versions([0]), T0 + 400 * DAY, policy);
    assert.deepEqual(plan, {
      current: '1',
      previous: undefined,
      disable: [],
      destroy: [],
      remaining: 1,
      nextDueAt: undefined,
      nextDisableAt: undefined,
      dueSince: {},
    });
  });

  test('versions newer than the current one (disabled by someone else) are left alone', () => {
    const list = versions([0, HOUR, HOUR], { '3': 'DISABLED' });
    const plan = planRetention(list, T0 + 400 * DAY, policy);
    assert.equal(plan.current, '2');
    assert.deepEqual(plan.destroy, ['1']);
    assert.ok(!plan.disable.includes('3') && !plan.destroy.includes('3'));
  });

  test('a known current version listed after another enabled one (a tie in the list): the one before it is left alone', () => {
    const list = versions([0, HOUR, 0]);
    const swapped = [list[1], list[0], list[2]] as VersionView[];
    const plan = planRetention(swapped, T0 + 400 * DAY, policy, '3');
    assert.equal(plan.current, '3');
    assert.deepEqual(plan.destroy, ['1']);
    assert.ok(!plan.destroy.includes('2') && !plan.disable.includes('2'));
  });

  test('no enabled version: nothing is planned', () => {
    const plan = planRetention(
      versions([0, HOUR], { '1': 'DISABLED', '2': 'DISABLED' }),
      T0 + 400 * DAY,
      policy,
    );
    assert.equal(plan.current, undefined);
    assert.deepEqual([plan.disable, plan.destroy], [[], []]);
  });

  test('destroyed versions are final and never planned again', () => {
    const plan = planRetention(versions([0, HOUR, HOUR], { '1': 'DESTROYED' }), T0 + 400 * DAY, policy);
    assert.deepEqual(plan.destroy, ['2']);
  });

  test('a version with an unreadable time is left alone', () => {
    const list: VersionView[] = [
      { version: '3', state: 'ENABLED', createdTime: new Date(T0).toISOString() },
      { version: '2', state: 'ENABLED', createdTime: 'garbage' },
      { version: '1', state: 'ENABLED', createdTime: 'garbage' },
    ];
    const plan = planRetention(list, T0 + 400 * DAY, policy);
    assert.deepEqual(plan.destroy, ['2']);
    assert.ok(!plan.destroy.includes('1'));
  });

  test("version ids are opaque (AWS, Azure): the order is the list's, newest first", () => {
    const ids = ['f3a9', '0b7c', 'e1d2'];
    const list = versions([0, HOUR, HOUR]).map((v, i) => ({ ...v, version: ids[i] as string }));
    const plan = planRetention(list, T0 + 2 * HOUR + 30 * DAY + HOUR, policy);
    assert.equal(plan.current, 'f3a9');
    assert.deepEqual(plan.destroy, ['0b7c', 'e1d2']);
  });

  test('a zero grace disables at once', () => {
    const plan = planRetention(two, T0 + HOUR, { ...policy, graceHours: 0 });
    assert.deepEqual(plan.disable, ['1']);
  });
});

describe('planRetention: keep at most N', () => {
  test('past its grace, a version beyond the newest N is destroyed (oldest first), skipping the disable', () => {
    // Eight versions an hour apart; two days later every grace is over.
    const list = versions(Array.from({ length: 8 }, (_, i) => (i === 0 ? 0 : HOUR)));
    const plan = planRetention(list, T0 + 2 * DAY + 8 * HOUR, policy);
    assert.deepEqual(plan.destroy, ['3', '2', '1']);
    assert.deepEqual(plan.disable, ['7', '6', '5', '4']);
    assert.equal(plan.remaining, 5);
  });

  test('a version still in its grace is kept even beyond N, and destroyed after', () => {
    const list = versions(Array.from({ length: 8 }, (_, i) => (i === 0 ? 0 : HOUR)));
    const within = planRetention(list, T0 + 8 * HOUR, { ...policy, keepVersions: 2 });
    assert.deepEqual([within.disable, within.destroy], [[], []]);
    assert.equal(within.remaining, 8);
    const after = planRetention(list, T0 + 7 * HOUR + 25 * HOUR, { ...policy, keepVersions: 2 });
    assert.deepEqual(after.destroy, ['6', '5', '4', '3', '2', '1']);
    assert.deepEqual(after.disable, ['7']);
  });

  test('keepVersions 1 keeps only the current one once the grace is over', () => {
    const plan = planRetention(versions([0, HOUR]), T0 + 26 * HOUR, { ...policy, keepVersions: 1 });
    assert.deepEqual([plan.disable, plan.destroy, plan.remaining], [[], ['1'], 1]);
  });
});

describe('planRetention: retire times (the retention lag)', () => {
  test('a disable is due since the grace end; a destroy since the retention end (the grace end if ENABLED)', () => {
    const superseded = T0 + HOUR;
    const disable = planRetention(versions([0, HOUR]), superseded + 30 * HOUR, policy);
    assert.deepEqual(disable.dueSince, { '1': superseded + 24 * HOUR });
    const later = superseded + 40 * DAY;
    assert.deepEqual(planRetention(versions([0, HOUR], { '1': 'DISABLED' }), later, policy).dueSince, {
      '1': superseded + 30 * DAY,
    });
    assert.deepEqual(planRetention(versions([0, HOUR]), later, policy).dueSince, {
      '1': superseded + 24 * HOUR,
    });
  });

  test('keep-N: a DISABLED version beyond N is due since the newest write (or its grace, if later)', () => {
    // Versions 1-3 an hour apart, 1 disabled after its grace; version 4 written two days later makes it excess.
    const list = versions([0, HOUR, HOUR, 2 * DAY], { '1': 'DISABLED' });
    const plan = planRetention(list, T0 + 2 * HOUR + 2 * DAY + HOUR, { ...policy, keepVersions: 3 });
    assert.deepEqual(plan.destroy, ['1']);
    assert.equal(plan.dueSince['1'], T0 + 2 * HOUR + 2 * DAY);
  });

  test('nextDisableAt is the next grace end of an ENABLED version; a retention end is not one', () => {
    const superseded = T0 + HOUR;
    assert.equal(
      planRetention(versions([0, HOUR]), superseded, policy).nextDisableAt,
      superseded + 24 * HOUR,
    );
    const disabled = planRetention(versions([0, HOUR], { '1': 'DISABLED' }), superseded + 2 * DAY, policy);
    assert.equal(disabled.nextDisableAt, undefined);
    assert.equal(disabled.nextDueAt, superseded + 30 * DAY);
  });
});

describe('planRetention: properties', () => {
  const arbitraryCase = fc.record({
    gaps: fc.array(fc.integer({ min: 0, max: 40 * DAY }), { minLength: 1, maxLength: 12 }),
    states: fc.array(fc.constantFrom('ENABLED', 'DISABLED', 'DESTROYED'), { minLength: 12, maxLength: 12 }),
    later: fc.integer({ min: 0, max: 500 * DAY }),
    graceHours: fc.integer({ min: 0, max: 72 }),
    retentionDays: fc.integer({ min: 3, max: 60 }),
    keepVersions: fc.integer({ min: 1, max: 8 }),
  });
  const build = (c: { gaps: number[]; states: string[] }) => {
    const states = Object.fromEntries(c.states.map((s, i) => [String(i + 1), s as VersionView['state']]));
    return versions(c.gaps, states);
  };

  test('never touches the current or a destroyed version; never disables what it destroys', () => {
    fc.assert(
      fc.property(arbitraryCase, (c) => {
        const list = build(c);
        const last = Date.parse(list[0]?.createdTime ?? '');
        const plan = planRetention(list, last + c.later, c);
        const touched = [...plan.disable, ...plan.destroy];
        assert.equal(new Set(touched).size, touched.length);
        if (plan.current !== undefined) assert.ok(!touched.includes(plan.current));
        for (const v of touched) {
          const found = list.find((x) => x.version === v);
          assert.notEqual(found?.state, 'DESTROYED');
          assert.ok(Number(v) < Number(plan.current));
        }
        for (const v of plan.disable) assert.equal(list.find((x) => x.version === v)?.state, 'ENABLED');
        // Every planned change has its retire time, in the past; nothing else has one.
        assert.deepEqual(Object.keys(plan.dueSince).sort(), [...touched].sort());
        for (const v of touched) assert.ok((plan.dueSince[v] as number) <= last + c.later, `version ${v}`);
      }),
      { numRuns: 500 },
    );
  });

  test('is idempotent: applying the plan and planning again at the same time plans nothing', () => {
    fc.assert(
      fc.property(arbitraryCase, (c) => {
        const list = build(c);
        const now = Date.parse(list[0]?.createdTime ?? '') + c.later;
        const after = apply(list, planRetention(list, now, c));
        const again = planRetention(after, now, c);
        assert.deepEqual([again.disable, again.destroy], [[], []]);
      }),
      { numRuns: 500 },
    );
  });

  test('nothing within its grace is disabled or destroyed; past every grace at most N remain', () => {
    fc.assert(
      fc.property(arbitraryCase, (c) => {
        const list = build(c);
        const now = Date.parse(list[0]?.createdTime ?? '') + c.later;
        const plan = planRetention(list, now, c);
        for (const v of [...plan.disable, ...plan.destroy]) {
          const next = list.find((x) => Number(x.version) === Number(v) + 1);
          assert.ok(
            next !== undefined && now >= Date.parse(next.createdTime) + c.graceHours * HOUR,
            `version ${v} touched within its grace`,
          );
        }
        const allGraceOver = c.later >= c.graceHours * HOUR;
        const newerThanCurrent = list.filter(
          (v) =>
            plan.current !== undefined && Number(v.version) > Number(plan.current) && v.state !== 'DESTROYED',
        ).length;
        if (allGraceOver && plan.current !== undefined)
          assert.ok(
            plan.remaining <= Math.max(c.keepVersions, 1 + newerThanCurrent),
            `remaining ${plan.remaining}`,
          );
      }),
      { numRuns: 500 },
    );
  });

  test('nextDueAt is in the future, and planning at it changes something', () => {
    fc.assert(
      fc.property(arbitraryCase, (c) => {
        const list = build(c);
        const now = Date.parse(list[0]?.createdTime ?? '') + c.later;
        const after = apply(list, planRetention(list, now, c));
        const { nextDueAt } = planRetention(after, now, c);
        if (nextDueAt === undefined) return;
        assert.ok(nextDueAt > now);
        const then = planRetention(after, nextDueAt, c);
        assert.ok(then.disable.length + then.destroy.length > 0);
      }),
      { numRuns: 500 },
    );
  });
});
