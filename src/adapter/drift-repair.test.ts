import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { SecretChange, SecretSummary } from '../kube/secret-cache.js';
import { classifyDrift } from './drift-repair.js';

const ID = '019466a0-8f8e-7abc-9def-0123456789ab';

function summary(over: Partial<SecretSummary> = {}): SecretSummary {
  return {
    namespace: `clusters-${ID}`,
    name: `${ID}-pull-secret`,
    resourceVersion: '10',
    type: 'kubernetes.io/dockerconfigjson',
    labels: { 'managed-by': 'hyperfleet', 'cluster-id': ID },
    annotations: { 'hyperfleet.io/content-sha256': 'aaa' },
    payloadSha256: 'p1',
    ...over,
  };
}

describe('classifyDrift', () => {
  const cases: Array<[string, SecretChange, string | undefined]> = [
    ['deleted by someone', { previous: summary() }, 'deleted'],
    ['deleted by the writer', { previous: summary(), ours: true }, undefined],
    ['managed-by taken off', { previous: summary(), released: true }, 'labels'],
    [
      'cluster-id changed',
      {
        previous: summary(),
        current: summary({ labels: { 'managed-by': 'hyperfleet', 'cluster-id': 'x' } }),
      },
      'labels',
    ],
    ['recreated as Opaque', { current: summary({ type: 'Opaque' }) }, 'type'],
    [
      'payload edited, our annotation kept',
      { previous: summary(), current: summary({ payloadSha256: 'p2' }) },
      'data',
    ],
    ['payload removed', { previous: summary(), current: summary({ payloadSha256: undefined }) }, 'data'],
    [
      'our update: payload and fingerprint together',
      {
        previous: summary(),
        current: summary({ payloadSha256: 'p2', annotations: { 'hyperfleet.io/content-sha256': 'bbb' } }),
      },
      undefined,
    ],
    [
      'our repair: the payload we last wrote',
      { previous: summary({ payloadSha256: 'p2' }), current: summary(), written: 'p1' },
      undefined,
    ],
    [
      'edited after our write',
      {
        previous: summary(),
        current: summary({ payloadSha256: 'p3', annotations: { 'hyperfleet.io/content-sha256': 'ccc' } }),
        written: 'p1',
      },
      'data',
    ],
    [
      'a foreign label or key (same payload)',
      { previous: summary(), current: summary({ resourceVersion: '11' }) },
      undefined,
    ],
    ['created by us', { current: summary() }, undefined],
    ['not a pull secret Secret', { previous: summary({ name: 'something-else' }) }, undefined],
  ];
  for (const [name, change, want] of cases) it(name, () => assert.equal(classifyDrift(change), want));
});
