import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertClusterId, assertKubernetesName, assertLabels, assertSecretId, managedLabels, quoteIdentifier } from './identifiers.js';

test('cluster ids: UUIDv7 and slugs pass, hostile values fail with a clear error', () => {
  assertClusterId('019466a0-8f8e-7abc-9def-0123456789ab');
  assertClusterId('cls-abc123');
  for (const bad of ['', 'UPPER', '../etc', 'a/b', 'x'.repeat(64), '-lead', 'trail-', 'a b', 'a\nb', 'é']) {
    assert.throws(() => assertClusterId(bad), { code: 'IDENTIFIER_INVALID' }, bad);
  }
});

test('secret ids and labels follow Secret Manager rules', () => {
  assertSecretId('hyperfleet-cls-1-pull-secret');
  assert.throws(() => assertSecretId('a.b'), { code: 'IDENTIFIER_INVALID' });
  assert.throws(() => assertSecretId('x'.repeat(256)), { code: 'IDENTIFIER_INVALID' });
  assertLabels(managedLabels('019466a0-8f8e-7abc-9def-0123456789ab'));
  assert.throws(() => assertLabels({ Key: 'v' }), { code: 'IDENTIFIER_INVALID' });
  assert.throws(() => assertLabels({ k: 'V' }), { code: 'IDENTIFIER_INVALID' });
  assert.throws(() => assertLabels({ k: 'x'.repeat(64) }), { code: 'IDENTIFIER_INVALID' });
});

test('Kubernetes names: DNS-1123 with per-kind length', () => {
  assertKubernetesName('a.b-c', 'Secret name');
  assert.throws(() => assertKubernetesName('a.b', 'Job name', 63), { code: 'IDENTIFIER_INVALID' });
  assert.throws(() => assertKubernetesName('x'.repeat(254), 'Secret name'), { code: 'IDENTIFIER_INVALID' });
});

test('quoted identifiers cannot forge log lines', () => {
  assert.equal(quoteIdentifier('a\nb"c'), '"a?b\\"c"');
  assert.ok(quoteIdentifier('x'.repeat(500)).length < 90);
});
