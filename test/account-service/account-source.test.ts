import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  startAccountServiceStandIn,
  type AccountServiceStandIn,
} from '../../src/dev/account-service/index.js';
import { LocalStore } from '../../src/stores/local/index.js';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { CANARY_PULL_SECRET, findCanary } from '../support/fixtures.js';

// `pullSecretSource: account-service`: the adapter takes each cluster's pull secret from the
// account-service stand-in as OCM serves it (`POST /api/accounts_mgmt/v1/pull_secrets` with the
// cluster id as `external_resource_id`), over loopback HTTP with the operator's bearer token file,
// instead of `spec.pullSecret.data`, with the same validation and reports.

const BEARER = 'YWNjb3VudC1iZWFyZXItY2FuYXJ5LTdRMnYtdG9rZW4=';

describe('pull secret from the account service', () => {
  let service: AccountServiceStandIn;
  let stack: AdapterStack;
  let store: LocalStore;
  let tokenDir: string;

  before(async () => {
    service = await startAccountServiceStandIn({ tokens: [BEARER] });
    tokenDir = await mkdtemp(join(tmpdir(), 'ps-source-'));
    const tokenFile = join(tokenDir, 'token');
    await writeFile(tokenFile, `${BEARER}\n`, { mode: 0o600 });
    stack = await startAdapterStack({
      pullSecretSource: 'account-service',
      accountService: {
        baseUrl: service.url,
        tokenFile,
        timeoutMs: 2000,
        transfer: { interval: '7d', jitter: 1 },
      },
    });
    store = new LocalStore({ dir: join(stack.dir, 'store') });
  });
  after(async () => {
    await stack.stop();
    await store.close();
    await service.stop();
    await rm(tokenDir, { recursive: true, force: true });
  });

  it("stores OCM's pull secret for the cluster id, not the spec's, and never leaks it or the token", async () => {
    const cluster = await stack.seedCluster();
    service.setResourcePullSecret(cluster.id, CANARY_PULL_SECRET);
    await stack.publish(cluster);
    const status = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Available') === 'True/SecretAvailable',
    );
    assert.equal(conditionOf(status, 'Applied'), 'True/SecretCreated');
    const stored = await store.accessLatestEnabled(`hyperfleet-${cluster.id}-pull-secret`);
    assert.deepEqual(JSON.parse(stored?.data.toString('utf8') ?? '{}'), JSON.parse(CANARY_PULL_SECRET));
    assert.equal(service.calls.pullSecrets, 1);
    const seen = JSON.stringify(stack.api.listStatuses(cluster.id)) + stack.logs.join('\n');
    assert.equal(findCanary(seen), undefined, 'the source pull secret leaked');
    assert.ok(!seen.includes(BEARER), 'the bearer token leaked');
  });

  it('a 503 from the source fails the event, which is retried until the source answers', async () => {
    const cluster = await stack.seedCluster();
    service.setResourcePullSecret(cluster.id, CANARY_PULL_SECRET);
    service.injectFault({ route: 'pullSecrets', status: 503, times: 2 });
    const before = service.calls.pullSecrets;
    await stack.publish(cluster);
    const status = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Available') === 'True/SecretAvailable',
    );
    assert.equal(conditionOf(status, 'Health'), 'True/Healthy');
    assert.ok(
      service.calls.pullSecrets - before >= 3,
      `source asked ${service.calls.pullSecrets - before} times`,
    );
    assert.ok(
      stack.logs.some(
        (l) =>
          l.includes('Could not read the pull secret from the account service') && l.includes(cluster.id),
      ),
    );
  });

  it('an invalid answer fails validation like a spec would (Applied False InvalidPullSecret, Health True)', async () => {
    const cluster = await stack.seedCluster();
    service.setResourcePullSecret(cluster.id, '{"auths":{"quay.io":{"email":"a@example.com"}}}');
    await stack.publish(cluster);
    const status = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Applied') === 'False/InvalidPullSecret',
    );
    assert.equal(conditionOf(status, 'Health'), 'True/Healthy');
    const applied = status.conditions.find((c) => c.type === 'Applied');
    assert.match(applied?.message ?? '', /the account service's pull secret of cluster/);
    assert.equal(await store.getSecret(`hyperfleet-${cluster.id}-pull-secret`), undefined);
  });

  it("a cluster needs only its id (OCM creates its credentials); a 403 is a refusal naming OCM's code", async () => {
    const fresh = await stack.seedCluster({ organizationId: 'ignored-by-this-source' });
    await stack.publish(fresh);
    await stack.waitForStatus(fresh.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    const stored = await store.accessLatestEnabled(`hyperfleet-${fresh.id}-pull-secret`);
    const issued = service.resourcePullSecret(fresh.id) ?? 'null';
    assert.deepEqual(JSON.parse(stored?.data.toString('utf8') ?? '{}'), JSON.parse(issued));
    const denied = await stack.seedCluster();
    service.injectFault({ route: 'pullSecrets', status: 403 });
    await stack.publish(denied);
    const refusal = 'False/AccountServiceRefused';
    const refused = await stack.waitForStatus(denied.id, (s) => conditionOf(s, 'Applied') === refusal);
    assert.match(
      refused.conditions.find((c) => c.type === 'Applied')?.message ?? '',
      /answered 403 .*ACCT-MGMT-11/,
    );
  });
});
