import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS, buildPullSecretManifest, DOCKERCONFIGJSON_KEY } from './pull-secret-manifest.js';
import { contentMatches, isUpToDate, mergeSecret, type ExistingSecret } from './secret-merge.js';

const DATA = Buffer.from('{"auths":{"quay.io":{"auth":"eDp5"}}}');
const desired = (now: string, version = '1', data = DATA) =>
  buildPullSecretManifest({
    clusterId: 'c1',
    pullSecret: data,
    secretPath: 'p',
    secretVersion: version,
    now: new Date(now),
  });

function existingFrom(m: ReturnType<typeof desired>): ExistingSecret {
  return structuredClone({ metadata: m.metadata, type: m.type, data: m.data });
}

describe('secret merge rules', () => {
  it('treats a later build of the same content as up to date', () => {
    const existing = existingFrom(desired('2025-01-01T00:00:00Z'));
    assert.equal(isUpToDate(existing, desired('2030-01-01T00:00:00Z')), true);
  });

  it('needs a write when one of our labels or annotations differs', () => {
    const existing = existingFrom(desired('2025-01-01T00:00:00Z'));
    delete existing.metadata?.labels?.['cluster-id'];
    assert.equal(isUpToDate(existing, desired('2025-01-01T00:00:00Z')), false);
    assert.equal(
      isUpToDate(existingFrom(desired('2025-01-01T00:00:00Z')), desired('2025-01-01T00:00:00Z', '2')),
      false,
    );
  });

  it('compares the bytes, not only the fingerprint annotation', () => {
    const existing = existingFrom(desired('2025-01-01T00:00:00Z'));
    (existing.data as Record<string, string>)[DOCKERCONFIGJSON_KEY] =
      Buffer.from('{"auths":{}}').toString('base64');
    assert.equal(contentMatches(existing, desired('2025-01-01T00:00:00Z')), false);
  });

  it('keeps foreign keys and the old last-updated when content is unchanged', () => {
    const existing = existingFrom(desired('2025-01-01T00:00:00.000Z'));
    existing.metadata = {
      ...existing.metadata,
      labels: { ...existing.metadata?.labels, team: 't' },
      annotations: { ...existing.metadata?.annotations, note: 'n' },
    };
    existing.data = { ...existing.data, other: 'YQ==' };
    const merged = mergeSecret(existing, desired('2026-01-01T00:00:00.000Z', '2'));
    assert.equal(merged.labels.team, 't');
    assert.equal(merged.annotations.note, 'n');
    assert.equal(merged.data.other, 'YQ==');
    assert.equal(merged.annotations[ANNOTATIONS.secretVersion], '2');
    assert.equal(merged.annotations[ANNOTATIONS.lastUpdated], '2025-01-01T00:00:00.000Z');
  });

  it('moves last-updated when the content changes', () => {
    const existing = existingFrom(desired('2025-01-01T00:00:00.000Z'));
    const merged = mergeSecret(
      existing,
      desired('2026-01-01T00:00:00.000Z', '2', Buffer.from('{"auths":{"a.io":{"auth":"eDp5"}}}')),
    );
    assert.equal(merged.annotations[ANNOTATIONS.lastUpdated], '2026-01-01T00:00:00.000Z');
  });
});
