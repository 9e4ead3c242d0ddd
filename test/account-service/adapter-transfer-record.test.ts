import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import {
  readTransferRecord,
  transferRecordId,
  writeTransferRecord,
} from '../../src/account-service/transfer-record.js';
import { mergeTransferredPullSecret } from '../../src/pullsecret/transfer-merge.js';
import { LocalStore } from '../../src/stores/local/index.js';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { findCanary, VALID_PULL_SECRET } from '../support/fixtures.js';

// The adapter with `accountService` configured: its in-process reconcile merges an applied-transfer
// record into the spec, reports it in the status data, and deletes the record with the cluster.

const TRANSFERRED = JSON.stringify({
  auths: { 'quay.io': { auth: 'cHVsbGJvdDpzM2NyM3QtY2FuYXJ5LTdRMnY=' } },
});
let stack: AdapterStack;
let store: LocalStore;

before(async () => {
  // No request reaches the account service here: the record is written as an applied transfer leaves it.
  stack = await startAdapterStack({
    accountService: { baseUrl: 'http://127.0.0.1:9' },
    deletion: { cloudSecret: 'delete' },
  });
  store = new LocalStore({ dir: join(stack.dir, 'store') });
});
after(async () => {
  await store.close();
  await stack.stop();
});

test('a spec reconcile merges the applied transfer, reports it, and deletion removes the record', async () => {
  const cluster = await stack.seedCluster();
  const secretId = `hyperfleet-${cluster.id}-pull-secret`;
  await stack.publish(cluster);
  const first = await stack.waitForStatus(
    cluster.id,
    (s) => conditionOf(s, 'Available') === 'True/SecretAvailable',
  );
  assert.equal(first.data?.transferId, undefined);

  const labels = {
    'managed-by': 'hyperfleet',
    adapter: 'pullsecret',
    'cluster-id': cluster.id,
    'resource-type': 'pull-secret',
    'hyperfleet-version': 'v1',
  };
  await writeTransferRecord(
    store,
    { secretId, labels },
    { transferId: 'transfer-9', appliedAt: '2026-11-25T05:00:00.000Z', secret: TRANSFERRED },
    { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } },
  );
  await stack.publish(cluster);
  const merged = await stack.waitForStatus(cluster.id, (s) => s.data?.transferId === 'transfer-9');
  assert.equal(merged.data?.transferAppliedAt, '2026-11-25T05:00:00.000Z');
  assert.equal(merged.data?.secretVersion, '2');
  const latest = await store.accessLatestEnabled(secretId);
  assert.equal(
    latest?.data.toString('utf8'),
    mergeTransferredPullSecret(VALID_PULL_SECRET, TRANSFERRED, {
      maxBytes: store.maxPayloadBytes,
      targetName: 'local store',
    }).data.toString('utf8'),
  );
  assert.equal(
    findCanary(JSON.stringify(stack.api.listStatuses(cluster.id)) + stack.logs.join('\n')),
    undefined,
    'the transferred credential leaked',
  );

  const deleted = await stack.request('DELETE', `/clusters/${cluster.id}`);
  assert.ok(deleted.status < 300, `DELETE answered ${deleted.status}`);
  await stack.publish({ id: cluster.id, generation: stack.api.getCluster(cluster.id)?.generation ?? 2 });
  const deadline = Date.now() + 10_000;
  while (stack.api.getCluster(cluster.id) !== undefined && Date.now() < deadline) await sleep(20);
  assert.equal(stack.api.getCluster(cluster.id), undefined);
  assert.equal(await store.getSecret(secretId), undefined);
  assert.equal(
    await store.getSecret(transferRecordId(secretId)),
    undefined,
    'the transfer record is deleted with the cluster',
  );
  assert.equal(await readTransferRecord(store, secretId), undefined);
});
