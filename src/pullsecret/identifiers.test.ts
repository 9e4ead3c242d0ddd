import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertClusterId,
  assertKubernetesName,
  assertLabels,
  assertSecretId,
  isClusterId,
  isKubernetesName,
  managedLabels,
  quoteIdentifier,
} from './identifiers.js';

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

test('isClusterId and isKubernetesName: the same rules, as yes/no', () => {
  for (const id of ['cls-abc123', '019466a0-8f8e-7abc-9def-0123456789ab', 'x'.repeat(63)])
    assert.equal(isClusterId(id), true, id);
  for (const id of ['', 'UPPER', 'x'.repeat(64), '-lead', 'a.b']) assert.equal(isClusterId(id), false, id);
  assert.equal(isKubernetesName('a.b-c'), true);
  assert.equal(isKubernetesName('x'.repeat(253)), true);
  assert.equal(isKubernetesName('x'.repeat(254)), false);
  assert.equal(isKubernetesName('a..b'), false);
  assert.equal(isKubernetesName('a.b', 63), false);
  assert.equal(isKubernetesName('x'.repeat(63), 63), true);
  assert.equal(isKubernetesName('x'.repeat(64), 63), false);
  assert.equal(isKubernetesName('Team', 63), false);
});
