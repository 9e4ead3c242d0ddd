import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PacingObserver } from '../stores/rate-limited-store.js';
import type { TokenBucket } from '../util/token-bucket.js';
import { StoreProvider } from './store-provider.js';

process.env.METADATA_SERVER_DETECTION = 'none';

test("one set of quota buckets per project, shared by all of that project's work, released on close", async () => {
  const live = new Map<string, Set<TokenBucket>>();
  const observer: PacingObserver = {
    track: (_store, quota, bucket) => {
      const buckets = live.get(quota) ?? new Set();
      live.set(quota, buckets.add(bucket));
    },
    untrack: (_store, quota, bucket) => void live.get(quota)?.delete(bucket),
    waited: () => undefined,
  };
  // Building a GCP client makes no call, so an unreachable endpoint is fine here.
  const stores = StoreProvider.single(
    { kind: 'gcp', config: { endpoint: '127.0.0.1:9', insecure: true }, writesPerMinute: 300 },
    { pacing: observer },
  );
  const project = (projectId: string, extra: Record<string, string> = {}) =>
    stores.forTarget({ provider: '*', settings: { projectId, ...extra } });
  const [a1, a2] = await Promise.all([project('project-a'), project('project-a')]);
  assert.equal(a1, a2, 'the same paced client for every caller of a project');
  await project('project-b');
  // Another client of project-a (a customer-managed key) shares its buckets: none are added.
  await project('project-a', { kmsKeyName: 'projects/project-a/locations/global/keyRings/r/cryptoKeys/k' });
  assert.deepEqual(
    [...live].map(([quota, buckets]) => [quota, buckets.size]),
    [
      ['reads', 2],
      ['writes', 2],
      ['accesses', 2],
    ],
  );
  const writes = [...(live.get('writes') ?? [])][0];
  assert.equal(writes?.burst, 5, 'the override sizes the bucket: 300 a minute holds 5');
  await stores.close();
  assert.deepEqual(
    [...live.values()].map((b) => b.size),
    [0, 0, 0],
  );
});
