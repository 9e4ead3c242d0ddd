import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveClusterNames } from './cluster-names.js';

const UUID = '019466a0-8f8e-7abc-9def-0123456789ab';

test('derives every documented name once, frozen', () => {
  const names = deriveClusterNames({ clusterId: UUID });
  assert.deepEqual(
    { ...names, labels: { ...names.labels } },
    {
      clusterId: UUID,
      secretId: `hyperfleet-${UUID}-pull-secret`,
      labels: {
        'managed-by': 'hyperfleet',
        adapter: 'pullsecret',
        'cluster-id': UUID,
        'resource-type': 'pull-secret',
        'hyperfleet-version': 'v1',
      },
      namespace: `clusters-${UUID}`,
      kubernetesSecretName: `${UUID}-pull-secret`,
    },
  );
  assert.ok(Object.isFrozen(names) && Object.isFrozen(names.labels));
});

test('an id of 55-63 characters passes the id rule but not the default namespace: refused up front', () => {
  for (const length of [55, 60, 63]) {
    const id = `c${'0'.repeat(length - 1)}`;
    assert.throws(
      () => deriveClusterNames({ clusterId: id }),
      (err: Error & { code?: string }) => err.code === 'IDENTIFIER_INVALID' && /at most 54/.test(err.message),
    );
    // With its own namespace, or without a Kubernetes target, the id is usable.
    assert.equal(
      deriveClusterNames({ clusterId: id, namespace: 'clusters-custom' }).namespace,
      'clusters-custom',
    );
    assert.equal(
      deriveClusterNames({ clusterId: id, kubernetes: false }).secretId,
      `hyperfleet-${id}-pull-secret`,
    );
  }
  deriveClusterNames({ clusterId: `c${'0'.repeat(53)}` });
});

test('overrides are checked: namespace as a DNS-1123 label, secret name by the store rule', () => {
  for (const namespace of ['../../x', 'UPPER', 'a'.repeat(64), 'a.b']) {
    assert.throws(
      () => deriveClusterNames({ clusterId: 'cls-1', namespace }),
      { code: 'IDENTIFIER_INVALID' },
      namespace,
    );
  }
  assert.throws(() => deriveClusterNames({ clusterId: 'cls-1', secretName: 'a b' }), {
    code: 'IDENTIFIER_INVALID',
  });
  // Unused Kubernetes names are not checked.
  deriveClusterNames({ clusterId: 'cls-1', namespace: '../../x', kubernetes: false });
});

test('an invalid value is described, never quoted: it may be a credential', () => {
  for (const hostile of ['pullbot:s3cr3t-canary-7Q2v', 'user:hunter2@quay.io']) {
    for (const input of [
      { clusterId: hostile },
      { clusterId: 'cls-1', secretName: hostile },
      { clusterId: 'cls-1', namespace: hostile },
    ]) {
      assert.throws(
        () => deriveClusterNames(input),
        (err: Error) =>
          !err.message.includes('s3cr3t') &&
          !err.message.includes('hunter2') &&
          /\(\d+ characters, sha256 [0-9a-f]{8}…\)|character \d+ ":"/.test(err.message),
      );
    }
  }
});
