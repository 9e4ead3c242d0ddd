import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { PullSecretError } from '../errors/index.js';
import { validatePullSecret } from '../pullsecret/validate.js';
import {
  ANNOTATIONS,
  buildPullSecretManifest,
  DOCKERCONFIGJSON_KEY,
  MAX_SECRET_BYTES,
} from './pull-secret-manifest.js';

const CLUSTER = '0195f4a2-7c1e-7b3a-9d2e-4f5a6b7c8d9e';
const RAW = Buffer.from(
  '{ "auths": { "quay.io": { "auth": "dXNlcjpwYXNz" }, "a.io": { "auth": "eDp5" } } }\n',
);
const BASE = {
  clusterId: CLUSTER,
  pullSecret: RAW,
  secretPath: 'projects/p/secrets/s',
  secretVersion: '3',
  now: new Date('2025-01-02T03:04:05.000Z'),
};

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

describe('buildPullSecretManifest', () => {
  it('builds the documented Secret', () => {
    const m = buildPullSecretManifest(BASE);
    assert.equal(m.apiVersion, 'v1');
    assert.equal(m.kind, 'Secret');
    assert.equal(m.type, 'kubernetes.io/dockerconfigjson');
    assert.equal(m.metadata.name, `${CLUSTER}-pull-secret`);
    assert.equal(m.metadata.namespace, `clusters-${CLUSTER}`);
    assert.deepEqual(m.metadata.labels, { 'managed-by': 'hyperfleet', 'cluster-id': CLUSTER });
    assert.deepEqual(m.metadata.annotations, {
      [ANNOTATIONS.secretPath]: 'projects/p/secrets/s',
      [ANNOTATIONS.secretVersion]: '3',
      [ANNOTATIONS.lastUpdated]: '2025-01-02T03:04:05.000Z',
      [ANNOTATIONS.contentSha256]: sha256(
        '{"auths":{"a.io":{"auth":"eDp5"},"quay.io":{"auth":"dXNlcjpwYXNz"}}}',
      ),
    });
  });

  it('stores the bytes exactly as given', () => {
    const m = buildPullSecretManifest(BASE);
    assert.deepEqual(Object.keys(m.data), [DOCKERCONFIGJSON_KEY]);
    assert.ok(Buffer.from(m.data[DOCKERCONFIGJSON_KEY] ?? '', 'base64').equals(RAW));
  });

  it('gives formatting variants the same fingerprint', () => {
    const compact = Buffer.from('{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"},"a.io":{"auth":"eDp5"}}}');
    const a = buildPullSecretManifest(BASE).metadata.annotations[ANNOTATIONS.contentSha256];
    const b = buildPullSecretManifest({ ...BASE, pullSecret: compact }).metadata.annotations[
      ANNOTATIONS.contentSha256
    ];
    assert.equal(a, b);
  });

  it('uses an explicit namespace', () => {
    assert.equal(buildPullSecretManifest({ ...BASE, namespace: 'mgmt' }).metadata.namespace, 'mgmt');
  });

  it('rejects unusable identifiers up front', () => {
    for (const input of [
      { ...BASE, clusterId: 'Bad_Id' },
      { ...BASE, namespace: 'Not/A/Namespace' },
      { ...BASE, clusterId: 'a'.repeat(60) },
    ]) {
      assert.throws(
        () => buildPullSecretManifest(input),
        (err: unknown) => err instanceof PullSecretError && err.code === 'IDENTIFIER_INVALID',
      );
    }
  });

  it('rejects non-JSON and oversized payloads without quoting them', () => {
    assert.throws(
      () => buildPullSecretManifest({ ...BASE, pullSecret: Buffer.from('user:hunter2') }),
      (err: unknown) =>
        err instanceof PullSecretError &&
        err.code === 'PULL_SECRET_INVALID' &&
        !err.message.includes('hunter2'),
    );
    assert.throws(
      () => buildPullSecretManifest({ ...BASE, pullSecret: Buffer.alloc(MAX_SECRET_BYTES + 1, 0x20) }),
      (err: unknown) => err instanceof PullSecretError && err.code === 'PAYLOAD_TOO_LARGE',
    );
  });

  it("builds the same Secret from validation's parse of the bytes as from parsing them again", () => {
    const { document } = validatePullSecret(RAW, { maxBytes: MAX_SECRET_BYTES, targetName: 'test' });
    assert.deepEqual(
      buildPullSecretManifest({ ...BASE, parsed: { value: document } }),
      buildPullSecretManifest(BASE),
    );
  });

  it('still refuses oversized bytes when a parse is given', () => {
    const { document } = validatePullSecret(RAW, { maxBytes: MAX_SECRET_BYTES, targetName: 'test' });
    assert.throws(
      () =>
        buildPullSecretManifest({
          ...BASE,
          pullSecret: Buffer.alloc(MAX_SECRET_BYTES + 1, 0x20),
          parsed: { value: document },
        }),
      (err: unknown) => err instanceof PullSecretError && err.code === 'PAYLOAD_TOO_LARGE',
    );
  });
});
