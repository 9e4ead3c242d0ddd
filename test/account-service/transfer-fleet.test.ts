import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readTransferRecord } from '../../src/account-service/transfer-record.js';
import {
  startAccountServiceStandIn,
  type AccountServiceStandIn,
} from '../../src/dev/account-service/index.js';
import { mergeTransferredPullSecret } from '../../src/pullsecret/transfer-merge.js';
import { LocalStore } from '../../src/stores/local/index.js';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { CANARY_NEEDLES, findCanary } from '../support/fixtures.js';
import { until } from '../support/until.js';

// Fleet scheduling of ownership transfer checks in the adapter: the account-service stand-in and the
// HyperFleet API stand-in over loopback, the embedded broker (no event published here), the local store.

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const CLOUD = b64('cluster-bot:cloud-token-fleet-0001');
const SPEC = JSON.stringify({
  auths: {
    'cloud.openshift.com': { auth: CLOUD, email: 'old@example.com' },
    'quay.io': { auth: b64('old-owner:old-pw'), email: 'old@example.com' },
    'registry.example.com:5000': { auth: b64('mirror:mirror-pw') },
  },
});
/** The new owner's quay.io credential is the canary. */
const TRANSFERRED = JSON.stringify({
  auths: { 'quay.io': { auth: 'cHVsbGJvdDpzM2NyM3QtY2FuYXJ5LTdRMnY=' } },
});
const LIMITS = { maxBytes: 65_536, targetName: 'local store' };

describe('scheduled transfer checks (interval 1s)', () => {
  let service: AccountServiceStandIn;
  let stack: AdapterStack;
  let store: LocalStore;

  before(async () => {
    service = await startAccountServiceStandIn();
    stack = await startAdapterStack({
      accountService: {
        baseUrl: service.url,
        timeoutMs: 2000,
        transfer: { interval: '1s', jitter: 0, requestsPerSecond: 50 },
      },
    });
    store = new LocalStore({ dir: join(stack.dir, 'store') });
  });
  after(async () => {
    await stack.stop();
    await store.close();
    await service.stop();
  });

  it('applies an accepted transfer without any broker event: store version, status data, Kubernetes Secret', async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: SPEC } });
    service.setClusterToken(cluster.id, CLOUD);
    service.addTransfer({
      id: 'transfer-fleet-1',
      clusterId: cluster.id,
      status: 'accepted',
      secret: TRANSFERRED,
    });
    const status = await stack.waitForStatus(
      cluster.id,
      (s) => s.data?.transferId === 'transfer-fleet-1',
      20_000,
    );
    assert.equal(conditionOf(status, 'Applied'), 'True/SecretCreated');
    assert.equal(conditionOf(status, 'Health'), 'True/Healthy');
    const secretId = `hyperfleet-${cluster.id}-pull-secret`;
    const expected = mergeTransferredPullSecret(SPEC, TRANSFERRED, LIMITS).data.toString('utf8');
    assert.equal((await store.accessLatestEnabled(secretId))?.data.toString('utf8'), expected);
    assert.equal((await readTransferRecord(store, secretId))?.transferId, 'transfer-fleet-1');
    const manifest = await readFile(
      join(stack.dir, 'manifests', `clusters-${cluster.id}`, `${cluster.id}-pull-secret.yaml`),
      'utf8',
    );
    assert.ok(
      manifest.includes(Buffer.from(expected, 'utf8').toString('base64')),
      'the Kubernetes Secret holds the merged pull secret',
    );
    // The next scheduled checks find it applied: no new version.
    const before = service.calls.transfers;
    await until('two more checks', () => (service.calls.transfers >= before + 2 ? true : undefined));
    assert.equal((await store.describe(secretId))?.versions.length, 1);
    const metrics = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    assert.match(metrics, /^pullsecret_transfer_checks_total\{outcome="updated"\} [1-9]/m);
    assert.match(metrics, /^pullsecret_transfer_checks_total\{outcome="unchanged"\} [1-9]/m);
    assert.match(metrics, /^pullsecret_broker_connected\{broker="embedded"\} 1$/m);
    const leaked = findCanary(
      JSON.stringify(stack.api.listStatuses(cluster.id)) + stack.logs.join('\n') + metrics,
    );
    assert.equal(leaked, undefined, 'the transferred credential leaked');
    assert.ok(!stack.logs.join('\n').includes(CLOUD), 'the cluster token leaked');
    // One `operation` field per line: the check's own lines name it as their trigger, the step as operation.
    const mine = stack.logs.filter((l) => l.includes(cluster.id));
    assert.deepEqual(
      mine.filter((l) => l.split('"operation":').length > 2),
      [],
    );
    assert.ok(
      mine.some(
        (l) => l.includes('"trigger":"transfer-check"') && l.includes('"operation":"transfer-merge"'),
      ),
    );
    service.clearTransfers(cluster.id);
  });

  it('re-checks 5xx with the backoff, then turns Health False (AccountServiceUnavailable), and back', async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: SPEC } });
    service.setClusterToken(cluster.id, CLOUD);
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    service.injectFault({ route: 'transfers', status: 503, times: Infinity });
    const degraded = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Health') === 'False/AccountServiceUnavailable',
      30_000,
    );
    assert.equal(
      conditionOf(degraded, 'Applied'),
      'True/SecretUpToDate',
      'the pull secret itself is still fine',
    );
    const health = degraded.conditions.find((c) => c.type === 'Health');
    assert.match(
      health?.message ?? '',
      /Degraded: ownership transfer checks failed 6 times in a row: the account service answered 503/,
    );
    // An event's report keeps saying so while the account service is down.
    await stack.publish({ id: cluster.id, generation: 1 });
    await stack.waitForStatus(
      cluster.id,
      (s) =>
        s.last_report_time !== degraded.last_report_time &&
        conditionOf(s, 'Health') === 'False/AccountServiceUnavailable',
    );
    service.clearFaults();
    const healed = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Health') === 'True/Healthy',
      20_000,
    );
    assert.equal(conditionOf(healed, 'Available'), 'True/SecretAvailable');
    const metrics = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    assert.match(metrics, /^pullsecret_transfer_checks_total\{outcome="unreachable"\} ([6-9]|\d\d+)/m);
  });

  it('forgets a deleted cluster: no more checks for it', async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: SPEC } });
    const token = b64('cluster-bot:cloud-token-fleet-gone');
    service.setClusterToken(cluster.id, token);
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    const fleet = stack.adapter.transfers?.fleet;
    assert.equal(fleet?.has(cluster.id), true, 'an event made the cluster known');
    const deleted = await stack.request('DELETE', `/clusters/${cluster.id}`);
    assert.ok(deleted.status < 300);
    await stack.publish({ id: cluster.id, generation: stack.api.getCluster(cluster.id)?.generation ?? 2 });
    await until('the cluster removed', () =>
      stack.api.getCluster(cluster.id) === undefined ? true : undefined,
    );
    await until('the cluster forgotten', () => (fleet?.has(cluster.id) === false ? true : undefined));
    assert.equal(
      CANARY_NEEDLES.some((n) => stack.logs.join('\n').includes(n)),
      false,
    );
  });

  it('derives Degraded again after a restart from the reported status, so a recovery is reported', async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: SPEC } });
    service.setClusterToken(cluster.id, CLOUD);
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    service.injectFault({ route: 'transfers', status: 503, times: Infinity });
    await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Health') === 'False/AccountServiceUnavailable',
      30_000,
    );
    // Last in this suite: the stack's adapter stops. The new replica has counted nothing; the API
    // holds Degraded.
    await stack.adapter.stop();
    const { adapter: restarted } = await stack.startReplica();
    service.clearFaults();
    // Its first answered check finds the cluster healthy again, and says so: the failure count was
    // derived from the status last reported, not started afresh (which would keep Degraded shown).
    const healed = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Health') === 'True/Healthy',
      20_000,
    );
    assert.equal(conditionOf(healed, 'Available'), 'True/SecretAvailable');
    assert.equal(restarted.transfers?.fleet?.has(cluster.id), true);
  });
});

describe('two adapter replicas checking the same clusters', () => {
  let service: AccountServiceStandIn;
  let stack: AdapterStack;

  before(async () => {
    service = await startAccountServiceStandIn();
    stack = await startAdapterStack({
      accountService: {
        baseUrl: service.url,
        timeoutMs: 2000,
        transfer: { interval: '1s', jitter: 0, requestsPerSecond: 50 },
      },
    });
  });
  after(async () => {
    await stack.stop();
    await service.stop();
  });

  it('is harmless and counted: one store version, the other checks find it applied (unchanged)', async () => {
    const replica = await stack.startReplica();
    const cluster = await stack.seedCluster({ pullSecret: { data: SPEC } });
    service.setClusterToken(cluster.id, CLOUD);
    service.addTransfer({
      id: 'transfer-replicas-1',
      clusterId: cluster.id,
      status: 'accepted',
      secret: TRANSFERRED,
    });
    await stack.waitForStatus(cluster.id, (s) => s.data?.transferId === 'transfer-replicas-1', 20_000);
    const counted = async (adapter: typeof stack.adapter) => {
      const values = (await adapter.metrics.transferChecks.get()).values;
      const of = (outcome: string) => values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
      return { updated: of('updated'), unchanged: of('unchanged') };
    };
    // Both replicas list the cluster and check it every second.
    await until('both replicas checked the applied transfer', async () => {
      const [a, b] = [await counted(stack.adapter), await counted(replica.adapter)];
      return a.updated + a.unchanged >= 2 && b.updated + b.unchanged >= 2 ? true : undefined;
    });
    const [a, b] = [await counted(stack.adapter), await counted(replica.adapter)];
    assert.ok(
      a.updated + b.updated >= 1 && a.updated + b.updated <= 2,
      `applied ${a.updated + b.updated} times`,
    );
    assert.ok(a.unchanged + b.unchanged >= 2, 'the repeats are counted as unchanged');
    const store = new LocalStore({ dir: join(stack.dir, 'store') });
    try {
      assert.equal(
        (await store.describe(`hyperfleet-${cluster.id}-pull-secret`))?.versions.length,
        1,
        'one store version whatever the replicas',
      );
    } finally {
      await store.close();
    }
  });
});

describe('pacing of transfer checks', () => {
  let service: AccountServiceStandIn;
  let stack: AdapterStack;

  before(async () => {
    service = await startAccountServiceStandIn();
    stack = await startAdapterStack({
      accountService: {
        baseUrl: service.url,
        timeoutMs: 2000,
        transfer: { interval: '1h', jitter: 0, requestsPerSecond: 4 },
      },
    });
  });
  after(async () => {
    await stack.stop();
    await service.stop();
  });

  it('holds the request rate (window closed: one request per cluster, no store write)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const cluster = await stack.seedCluster({ pullSecret: { data: SPEC } });
      service.setClusterToken(cluster.id, CLOUD);
      ids.push(cluster.id);
    }
    // Started by the next cluster list (an interval away): ask for one now through the same path as an event.
    const started = Date.now();
    await stack.publish({ id: ids[0] ?? '', generation: 1 });
    await stack.waitForStatus(ids[0] ?? '', (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    for (const id of ids.slice(1)) stack.adapter.transfers?.fleet?.seen(id);
    await until('12 checks', () => (service.calls.transfers >= 12 ? true : undefined), 30_000);
    const elapsed = Date.now() - started;
    // 4 a second with a burst of 1: 12 requests take at least 11 / 4 s, however fast the machine.
    assert.ok(elapsed >= 2500, `12 checks in ${elapsed} ms: faster than 4 a second`);
    assert.equal(service.calls.transfers, 12, 'each cluster checked once in the interval');
    const store = new LocalStore({ dir: join(stack.dir, 'store') });
    try {
      for (const id of ids.slice(1))
        assert.equal(
          await store.getSecret(`hyperfleet-${id}-pull-secret`),
          undefined,
          'no store write for a closed window',
        );
    } finally {
      await store.close();
    }
  });
});
