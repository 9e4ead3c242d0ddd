import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildPullSecretManifest } from './pull-secret-manifest.js';
import { isNewerVersion, summarizeSecret, summaryIsUpToDate } from './secret-cache.js';

const ID = '019466a0-8f8e-7abc-9def-0123456789ab';
const PULL = Buffer.from('{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}');
const desired = buildPullSecretManifest({
  clusterId: ID,
  pullSecret: PULL,
  secretPath: 'p/s',
  secretVersion: '1',
});

describe('secret cache summaries', () => {
  it('keep our labels and annotations and a hash, never the payload or other keys', () => {
    const s = summarizeSecret({
      ...desired,
      metadata: {
        ...desired.metadata,
        resourceVersion: '7',
        labels: { ...desired.metadata.labels, team: 'x' },
        annotations: { ...desired.metadata.annotations, note: 'y' },
      },
      data: { ...desired.data, other: 'eA==' },
    });
    assert.deepEqual(Object.keys(s.labels).sort(), ['cluster-id', 'managed-by']);
    assert.equal(s.annotations.note, undefined);
    assert.ok(!JSON.stringify(s).includes(desired.data['.dockerconfigjson'] ?? '?'));
    assert.ok(!JSON.stringify(s).includes('dXNlcjpwYXNz'));
    assert.match(s.payloadSha256 ?? '', /^[0-9a-f]{64}$/);
  });

  it('show up to date only for the same bytes, type, labels and annotations', () => {
    const s = summarizeSecret(desired);
    assert.equal(summaryIsUpToDate(s, desired), true);
    const other = buildPullSecretManifest({
      clusterId: ID,
      pullSecret: Buffer.from('{"auths":{"quay.io":{"auth":"b3RoZXI6cGFzcw=="}}}'),
      secretPath: 'p/s',
      secretVersion: '2',
    });
    assert.equal(summaryIsUpToDate(s, other), false);
    assert.equal(summaryIsUpToDate({ ...s, type: 'Opaque' }, desired), false);
    assert.equal(summaryIsUpToDate({ ...s, labels: { 'managed-by': 'hyperfleet' } }, desired), false);
    // Same content formatted otherwise: the fingerprint matches, the bytes do not; a write is needed.
    const reformatted = buildPullSecretManifest({
      clusterId: ID,
      pullSecret: Buffer.from('{ "auths": {"quay.io":{"auth":"dXNlcjpwYXNz"}}}'),
      secretPath: 'p/s',
      secretVersion: '1',
    });
    assert.equal(summaryIsUpToDate(s, reformatted), false);
  });

  it('order resourceVersions numerically', () => {
    assert.equal(isNewerVersion('10', '9'), true);
    assert.equal(isNewerVersion('9', '10'), false);
    assert.equal(isNewerVersion('10', '10'), false);
    assert.equal(isNewerVersion(undefined, '10'), true);
  });
});
