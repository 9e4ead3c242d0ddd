import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { matchesSelector } from './selector.js';
import { buildStatus, sameStatus } from './status.js';
import { parseShareSpec } from './validate.js';

describe('parseShareSpec', () => {
  test('accepts a minimal share and fills the defaults', () => {
    const parsed = parseShareSpec(
      { source: { clusterId: 'c1' }, consumers: { namespaces: ['a', 'a', 'b'] } },
      'shared',
    );
    assert.ok('spec' in parsed);
    assert.deepEqual(parsed.spec.consumers.namespaces, ['a', 'b']);
    assert.equal(parsed.spec.source.kind, 'pullSecret');
    assert.deepEqual(parsed.spec.target, { secretName: 'shared', imagePullSecrets: false });
    assert.deepEqual(parsed.spec.consumers.serviceAccounts, ['default']);
  });

  test('refuses bad names, no consumers, reserved copy names and long share names, naming each problem', () => {
    const cases: [unknown, string, RegExp][] = [
      [
        { source: { clusterId: 'C1!' }, consumers: { namespaces: ['a'] } },
        's',
        /clusterId "C1!" is not a cluster id/,
      ],
      [{ source: { clusterId: 'c1' }, consumers: {} }, 's', /names no namespaces and no namespaceSelector/],
      [
        { source: { clusterId: 'c1' }, consumers: { namespaces: ['Bad_NS'] } },
        's',
        /spec.consumers.namespaces: "Bad_NS" is not a valid name/,
      ],
      [
        { source: { clusterId: 'c1' }, consumers: { namespaces: ['a'] } },
        'c1-pull-secret',
        /reserved for the clusters' own Secrets/,
      ],
      [
        { source: { clusterId: 'c1' }, consumers: { namespaces: ['a'] } },
        'x'.repeat(64),
        /longer than 63 characters/,
      ],
      [
        {
          source: { clusterId: 'c1' },
          consumers: { namespaceSelector: { matchExpressions: [{ key: 'k', operator: 'In' }] } },
        },
        's',
        /In needs values/,
      ],
      [
        { source: { clusterId: 'c1' }, consumers: { namespaces: ['a'] }, target: { secretName: 42 } },
        's',
        /secretName "" is not a Secret name/,
      ],
    ];
    for (const [spec, name, message] of cases) {
      const parsed = parseShareSpec(spec, name);
      assert.ok('problem' in parsed, JSON.stringify(spec));
      assert.equal(parsed.problem.reason, 'InvalidSpec');
      assert.match(parsed.problem.message, message);
    }
  });

  test('accepts an entitlement source, but not as an image pull secret; refuses unknown kinds', () => {
    const spec = (kind: unknown, target: Record<string, unknown> = {}) =>
      parseShareSpec({ source: { clusterId: 'c1', kind }, consumers: { namespaces: ['a'] }, target }, 's');
    const parsed = spec('entitlement', { secretName: 'etc-pki-entitlement' });
    assert.ok('spec' in parsed);
    assert.deepEqual(parsed.spec.source, { clusterId: 'c1', kind: 'entitlement' });
    assert.equal(parsed.spec.target.secretName, 'etc-pki-entitlement');
    const pulled = spec('entitlement', { imagePullSecrets: true });
    assert.ok('problem' in pulled);
    assert.equal(pulled.problem.reason, 'InvalidSpec');
    assert.match(
      pulled.problem.message,
      /imagePullSecrets: a source of kind entitlement is no registry credential/,
    );
    assert.ok('spec' in spec('pullSecret', { imagePullSecrets: true }));
    for (const kind of ['other', 'toString', 42]) {
      const refused = spec(kind);
      assert.ok('problem' in refused, String(kind));
      assert.match(refused.problem.message, /spec.source.kind must be pullSecret or entitlement/);
    }
  });
});

describe('matchesSelector', () => {
  test('matchLabels and every operator', () => {
    const labels = { team: 'a', tier: 'prod' };
    assert.equal(matchesSelector({}, labels), true);
    assert.equal(matchesSelector({ matchLabels: { team: 'a' } }, labels), true);
    assert.equal(matchesSelector({ matchLabels: { team: 'b' } }, labels), false);
    assert.equal(
      matchesSelector(
        { matchExpressions: [{ key: 'tier', operator: 'In', values: ['prod', 'dev'] }] },
        labels,
      ),
      true,
    );
    assert.equal(
      matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['prod'] }] }, labels),
      false,
    );
    assert.equal(
      matchesSelector({ matchExpressions: [{ key: 'x', operator: 'NotIn', values: ['prod'] }] }, labels),
      true,
    );
    assert.equal(matchesSelector({ matchExpressions: [{ key: 'team', operator: 'Exists' }] }, labels), true);
    assert.equal(
      matchesSelector({ matchExpressions: [{ key: 'team', operator: 'DoesNotExist' }] }, labels),
      false,
    );
  });
});

describe('buildStatus', () => {
  test('keeps the transition time while Ready does not change, sorts consumers, compares without key order', () => {
    const first = buildStatus({
      generation: 1,
      reason: 'Projected',
      message: 'm',
      consumers: [
        { namespace: 'b', result: 'denied' },
        { namespace: 'a', result: 'granted' },
      ],
      now: new Date('2026-01-01T00:00:00Z'),
    });
    assert.deepEqual(
      first.consumers.map((c) => c.namespace),
      ['a', 'b'],
    );
    const again = buildStatus({
      generation: 2,
      previous: first,
      reason: 'Projected',
      message: 'm',
      consumers: first.consumers,
      now: new Date('2026-02-01T00:00:00Z'),
    });
    assert.equal(again.conditions[0]?.lastTransitionTime, '2026-01-01T00:00:00Z');
    const failed = buildStatus({
      generation: 2,
      previous: again,
      reason: 'ConsumersFailed',
      message: 'm',
      consumers: [],
      now: new Date('2026-03-01T00:00:00Z'),
    });
    assert.equal(failed.conditions[0]?.status, 'False');
    assert.equal(failed.conditions[0]?.lastTransitionTime, '2026-03-01T00:00:00Z');
    assert.ok(
      sameStatus(
        JSON.parse(
          JSON.stringify({ consumers: again.consumers, conditions: again.conditions, observedGeneration: 2 }),
        ),
        again,
      ),
    );
    assert.ok(!sameStatus(first, again));
  });
});
