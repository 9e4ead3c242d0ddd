import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { writeTransferRecord } from '../../src/account-service/transfer-record.js';
import { managedLabels } from '../../src/pullsecret/identifiers.js';
import { mergeTransferredPullSecret } from '../../src/pullsecret/transfer-merge.js';
import { LocalStore } from '../../src/stores/local/index.js';
import { baseEnv, finalLine, runCli } from '../support/cli.js';
import { findCanary, VALID_PULL_SECRET } from '../support/fixtures.js';

// `run-job pull-secret` with TRANSFER_RECORDS=true (what the adapter's Job mode sets with
// accountService): the job merges the applied-transfer record into the spec's pull secret.

const CLUSTER = '019466a0-8f8e-7abc-9def-0123456789ac';
const SECRET_ID = `hyperfleet-${CLUSTER}-pull-secret`;
/** The new owner's quay.io credential is the canary. */
const TRANSFERRED = JSON.stringify({
  auths: { 'quay.io': { auth: 'cHVsbGJvdDpzM2NyM3QtY2FuYXJ5LTdRMnY=' } },
});
let dir: string;
before(async () => (dir = await mkdtemp(join(tmpdir(), 'ps-job-transfer-'))));
after(async () => rm(dir, { recursive: true, force: true }));

test('the job keeps an applied transfer when TRANSFER_RECORDS=true, and ignores the record without it', async () => {
  const storeDir = join(dir, 'store');
  const store = new LocalStore({ dir: storeDir });
  try {
    const labels = { ...managedLabels(CLUSTER), 'resource-type': 'pull-secret' };
    await writeTransferRecord(
      store,
      { secretId: SECRET_ID, labels },
      { transferId: 'transfer-job-1', appliedAt: '2026-11-25T05:00:00.000Z', secret: TRANSFERRED },
      { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } },
    );
  } finally {
    await store.close();
  }
  const env = (extra: Record<string, string> = {}) =>
    baseEnv({
      LOCAL_STORE_DIR: storeDir,
      CLUSTER_ID: CLUSTER,
      PULL_SECRET_DATA: VALID_PULL_SECRET,
      ...extra,
    });

  const merged = await runCli(['run-job', 'pull-secret'], env({ TRANSFER_RECORDS: 'true' }));
  assert.equal(merged.code, 0, merged.stderr);
  assert.equal(finalLine(merged)?.outcome, 'created');
  assert.equal(findCanary(merged.stdout + merged.stderr), undefined, 'the transferred credential leaked');
  const reader = new LocalStore({ dir: storeDir });
  try {
    const expected = mergeTransferredPullSecret(VALID_PULL_SECRET, TRANSFERRED, {
      maxBytes: reader.maxPayloadBytes,
      targetName: 'local store',
    }).data.toString('utf8');
    assert.equal((await reader.accessLatestEnabled(SECRET_ID))?.data.toString('utf8'), expected);
  } finally {
    await reader.close();
  }
  // Again: the same merged content, no new version.
  const again = await runCli(['run-job', 'pull-secret'], env({ TRANSFER_RECORDS: 'true' }));
  assert.equal(finalLine(again)?.outcome, 'unchanged');
  // Without the setting the spec alone is written (what a job did before: the transfer undone).
  const plain = await runCli(['run-job', 'pull-secret'], env());
  assert.equal(finalLine(plain)?.outcome, 'updated');

  const bad = await runCli(['run-job', 'pull-secret'], env({ TRANSFER_RECORDS: 'yes' }));
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /TRANSFER_RECORDS/);
});
