import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  checkAndApplyClusterTransfer,
  type ClusterTransferDeps,
} from '../../src/account-service/apply-transfer.js';
import { createAccountServiceClient, type AccountServiceClient } from '../../src/account-service/client.js';
import { readTransferRecord, transferRecordId } from '../../src/account-service/transfer-record.js';
import { transferMergeStep } from '../../src/account-service/transfer-merge-step.js';
import {
  startAccountServiceStandIn,
  type AccountServiceStandIn,
} from '../../src/dev/account-service/index.js';
import { ManifestDirectoryTarget } from '../../src/kube/manifest-directory.js';
import { createLogger } from '../../src/observability/logger.js';
import { mergeTransferredPullSecret } from '../../src/pullsecret/transfer-merge.js';
import { reconcilePullSecret } from '../../src/reconcile/reconcile-pull-secret.js';
import { LocalStore } from '../../src/stores/local/index.js';
import type { SecretStore } from '../../src/stores/store.js';
import { CANARY_NEEDLES } from '../support/fixtures.js';

// Applying an accepted ownership transfer through the reconcile: the account-service stand-in over
// loopback HTTP, the local encrypted store, the manifest-directory Kubernetes target.

const CLUSTER = '019466a0-2222-7000-8000-000000000002';
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const CLOUD = b64('cluster-bot:cloud-token-abcdef');
const spec = (mirrorPassword = 'mirror-pw') =>
  JSON.stringify({
    auths: {
      'cloud.openshift.com': { auth: CLOUD, email: 'old@example.com' },
      'quay.io': { auth: b64('old-owner:old-pw'), email: 'old@example.com' },
      'registry.example.com:5000': { auth: b64(`mirror:${mirrorPassword}`) },
    },
  });
/** The new owner's quay.io credential is the canary (`pullbot:s3cr3t-canary-7Q2v`). */
const TRANSFERRED = JSON.stringify({
  auths: { 'quay.io': { auth: 'cHVsbGJvdDpzM2NyM3QtY2FuYXJ5LTdRMnY=' } },
});
const NEEDLES = [...CANARY_NEEDLES, TRANSFERRED];
const LIMITS = { maxBytes: 65_536, targetName: 'local store' };
const SECRET_ID = `hyperfleet-${CLUSTER}-pull-secret`;
const RETRY = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 };

let service: AccountServiceStandIn;
let client: AccountServiceClient;
let dir: string;
let store: SecretStore;
let accesses: number;
let logs: string[];
let deps: ClusterTransferDeps;

/** Counts `accessLatestEnabled` calls on the real local store. */
function counting(inner: SecretStore): SecretStore {
  return new Proxy(inner, {
    get(target, key, receiver) {
      if (key === 'accessLatestEnabled')
        return (...args: Parameters<SecretStore['accessLatestEnabled']>) => (
          accesses++,
          target.accessLatestEnabled(...args)
        );
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

before(async () => {
  service = await startAccountServiceStandIn();
  client = createAccountServiceClient({ baseUrl: service.url, timeoutMs: 2000 });
});
after(() => service.stop());
beforeEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = await mkdtemp(join(tmpdir(), 'ps-transfer-apply-'));
  service.clearFaults();
  service.clearTransfers(CLUSTER);
  service.resetCalls();
  service.setClusterToken(CLUSTER, CLOUD);
  accesses = 0;
  logs = [];
  store = counting(new LocalStore({ dir: join(dir, 'store') }));
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  deps = {
    store,
    kubernetes: new ManifestDirectoryTarget({ directory: join(dir, 'manifests') }),
    retry: RETRY,
    log: createLogger({ level: 'debug', destination: sink }),
    check: { client, intervalMs: 240 },
    now: () => new Date('2026-11-25T05:00:00.000Z'),
  };
});

const reconcileSpec = (data = spec(), transferRecords = true) =>
  reconcilePullSecret(
    { clusterId: CLUSTER, pullSecretData: data },
    {
      store,
      kubernetes: deps.kubernetes,
      retry: RETRY,
      log: deps.log,
      steps: transferRecords ? [transferMergeStep] : [],
    },
  );
const manifestDir = () => join(dir, 'manifests', `clusters-${CLUSTER}`);
const versions = async (id: string) => (await store.describe(id))?.versions.length ?? 0;

describe('applying an ownership transfer through the reconcile', () => {
  it('applies an accepted transfer: a new store version holding the merge, the Secret updated in place, a durable record', async () => {
    const first = await reconcileSpec();
    assert.equal(first.outcome, 'created');
    service.addTransfer({ id: 'transfer-7', clusterId: CLUSTER, status: 'accepted', secret: TRANSFERRED });

    const { outcome, reconcile } = await checkAndApplyClusterTransfer(
      { clusterId: CLUSTER, pullSecretData: spec() },
      deps,
    );
    assert.equal(outcome.kind, 'updated');
    assert.equal(reconcile?.outcome, 'updated');
    assert.deepEqual(reconcile?.transfer, {
      transferId: 'transfer-7',
      appliedAt: '2026-11-25T05:00:00.000Z',
    });
    assert.equal(reconcile?.kubernetes?.outcome, 'updated');

    const merged = mergeTransferredPullSecret(spec(), TRANSFERRED, LIMITS).data;
    const latest = await store.accessLatestEnabled(SECRET_ID);
    assert.equal(latest?.version, '2');
    assert.equal(latest?.data.toString('utf8'), merged.toString('utf8'));
    // Same Secret name, one manifest, now holding the merge.
    assert.deepEqual(await readdir(manifestDir()), [`${CLUSTER}-pull-secret.yaml`]);
    assert.ok(
      (await readFile(join(manifestDir(), `${CLUSTER}-pull-secret.yaml`), 'utf8')).includes(
        merged.toString('base64'),
      ),
    );

    const record = await readTransferRecord(store, SECRET_ID);
    assert.deepEqual(record, {
      transferId: 'transfer-7',
      appliedAt: '2026-11-25T05:00:00.000Z',
      secret: TRANSFERRED,
    });
    const meta = await store.getSecret(transferRecordId(SECRET_ID));
    assert.equal(meta?.labels['resource-type'], 'pull-secret-transfer');
    assert.equal(meta?.labels['cluster-id'], CLUSTER);
    assert.equal(meta?.labels['managed-by'], 'hyperfleet');
  });

  it('a spec reconcile afterwards keeps the transfer, and merges a new spec with it', async () => {
    service.addTransfer({ id: 'transfer-7', clusterId: CLUSTER, status: 'accepted', secret: TRANSFERRED });
    assert.equal(
      (await checkAndApplyClusterTransfer({ clusterId: CLUSTER, pullSecretData: spec() }, deps)).outcome.kind,
      'updated',
    );
    const applied = await versions(SECRET_ID);

    const same = await reconcileSpec();
    assert.equal(same.outcome, 'unchanged');
    assert.equal(same.kubernetes?.outcome, 'unchanged');
    assert.deepEqual(same.transfer, { transferId: 'transfer-7', appliedAt: '2026-11-25T05:00:00.000Z' });
    assert.equal(await versions(SECRET_ID), applied);

    const changed = await reconcileSpec(spec('new-mirror-pw'));
    assert.equal(changed.outcome, 'updated');
    const latest = await store.accessLatestEnabled(SECRET_ID);
    assert.equal(
      latest?.data.toString('utf8'),
      mergeTransferredPullSecret(spec('new-mirror-pw'), TRANSFERRED, LIMITS).data.toString('utf8'),
    );
    // Without the record (no account service configured), the spec alone would undo the transfer.
    assert.notEqual(latest?.data.toString('utf8'), spec('new-mirror-pw'));
  });

  it('a second check with the same transfer writes nothing', async () => {
    service.addTransfer({ id: 'transfer-7', clusterId: CLUSTER, status: 'accepted', secret: TRANSFERRED });
    await checkAndApplyClusterTransfer({ clusterId: CLUSTER, pullSecretData: spec() }, deps);
    const before = [await versions(SECRET_ID), await versions(transferRecordId(SECRET_ID))];
    const again = await checkAndApplyClusterTransfer(
      { clusterId: CLUSTER, pullSecretData: spec() },
      { ...deps, now: () => new Date('2026-11-26T00:00:00.000Z') },
    );
    assert.equal(again.outcome.kind, 'unchanged');
    assert.equal(again.reconcile, undefined);
    assert.deepEqual([await versions(SECRET_ID), await versions(transferRecordId(SECRET_ID))], before);
    assert.equal((await readTransferRecord(store, SECRET_ID))?.appliedAt, '2026-11-25T05:00:00.000Z');
  });

  it('no transfer open: nothing written; the record read costs one store access per spec reconcile', async () => {
    assert.equal(
      (await checkAndApplyClusterTransfer({ clusterId: CLUSTER, pullSecretData: spec() }, deps)).outcome.kind,
      'none',
    );
    assert.equal(await store.getSecret(transferRecordId(SECRET_ID)), undefined);
    await reconcileSpec();
    accesses = 0;
    assert.equal((await reconcileSpec(spec(), false)).outcome, 'unchanged');
    assert.equal(accesses, 1);
    accesses = 0;
    const noRecord = await reconcileSpec();
    assert.equal(noRecord.outcome, 'unchanged');
    assert.equal(noRecord.transfer, undefined);
    assert.equal(accesses, 2);
  });

  it('a foreign record is refused as update-failed, the cluster secret untouched; the transferred secret never leaks (leak canary)', async () => {
    await reconcileSpec();
    service.addTransfer({ id: 'transfer-7', clusterId: CLUSTER, status: 'accepted', secret: TRANSFERRED });
    await store.createSecret(transferRecordId(SECRET_ID), { owner: 'someone-else' });
    const failed = await checkAndApplyClusterTransfer({ clusterId: CLUSTER, pullSecretData: spec() }, deps);
    assert.equal(failed.outcome.kind, 'update-failed');
    if (failed.outcome.kind === 'update-failed') assert.equal(failed.outcome.error.code, 'SECRET_UNMANAGED');
    assert.equal(await versions(SECRET_ID), 1);

    await store.deleteSecret(transferRecordId(SECRET_ID));
    const applied = await checkAndApplyClusterTransfer({ clusterId: CLUSTER, pullSecretData: spec() }, deps);
    assert.equal(applied.outcome.kind, 'updated');
    const shown =
      JSON.stringify([
        failed.outcome,
        failed.outcome.kind === 'update-failed' ? failed.outcome.message : '',
        applied.outcome,
        applied.reconcile?.transfer,
      ]) + logs.join('\n');
    for (const needle of NEEDLES)
      assert.equal(
        shown.includes(needle),
        false,
        'a transferred credential leaked into a log line or an outcome',
      );
    assert.ok(logs.some((line) => line.includes('"transfer_id":"transfer-7"')));
  });
});
