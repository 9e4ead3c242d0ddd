import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Cluster } from '../../src/hyperfleet/types.js';
import { conditionOf, startAdapterStack } from '../support/adapter-stack.js';
import { jsonFixture, VALID_PULL_SECRET } from '../support/fixtures.js';

// The adapter checks every name a reconcile will use before its first store or Kubernetes call: a
// cluster id of 55-63 characters is a valid id, but `clusters-{id}` is too long for a namespace.
// It used to store a version and then fail in the Kubernetes step.

test('a cluster whose namespace would be too long gets a failed status and nothing is written', async () => {
  const stack = await startAdapterStack();
  try {
    const fixture = jsonFixture<Cluster & { spec: Record<string, unknown> }>('clusters/gcp-cluster.json');
    const { href: _href, ...rest } = fixture;
    const id = `c${'0'.repeat(57)}`;
    const cluster = await stack.api.seedCluster({
      ...rest,
      id,
      generation: 1,
      spec: { ...fixture.spec, pullSecret: { data: VALID_PULL_SECRET } },
      status: { conditions: fixture.status.conditions.map((c) => ({ ...c, observed_generation: 1 })) },
    });
    await stack.publish(cluster);
    const status = await stack.waitForStatus(
      id,
      (s) => conditionOf(s, 'Applied') === 'False/InvalidConfiguration',
    );
    assert.match(
      status.conditions.find((c) => c.type === 'Applied')?.message ?? '',
      /is too long for the default namespace clusters-\{cluster-id\}/,
    );
    const stored = await readdir(join(stack.dir, 'store', 'secrets')).catch(() => []);
    assert.deepEqual(
      stored.filter((f) => f.includes(id)),
      [],
      'no secret stored',
    );
    const manifests = await readdir(join(stack.dir, 'manifests'), { recursive: true }).catch(() => []);
    assert.deepEqual(
      manifests.filter((f) => String(f).includes(id)),
      [],
      'no manifest written',
    );
  } finally {
    await stack.stop();
  }
});
