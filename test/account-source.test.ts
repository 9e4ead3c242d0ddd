import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startAccountServiceStandIn, type AccountServiceStandIn } from '../src/dev/account-service/index.js';
import { LocalStore } from '../src/stores/local/index.js';
import { conditionOf, startAdapterStack, type AdapterStack } from './support/adapter-stack.js';
import { CANARY_PULL_SECRET, findCanary } from './support/fixtures.js';

// `pullSecretSource: account-service`: the adapter takes each cluster's pull secret from the
// account-service stand-in (its organization's), over loopback HTTP with a bearer token file,
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
      accountService: { baseUrl: service.url, tokenFile, timeoutMs: 2000, transfer: { interval: '7d', jitter: 1 } },
    });
    store = new LocalStore({ dir: join(stack.dir, 'store') });
  });
  after(async () => {
    await stack.stop();
    await store.close();
    await service.stop();
    await rm(tokenDir, { recursive: true, force: true });
  });

  it("stores the organization's pull secret, not the spec's, and never leaks it or the token", async () => {
    service.setOrganizationPullSecret('org-canary-1', CANARY_PULL_SECRET);
    const cluster = await stack.seedCluster({ organizationId: 'org-canary-1' });
    await stack.publish(cluster);
    const status = await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    assert.equal(conditionOf(status, 'Applied'), 'True/SecretCreated');
    const stored = await store.accessLatestEnabled(`hyperfleet-${cluster.id}-pull-secret`);
    assert.deepEqual(JSON.parse(stored?.data.toString('utf8') ?? '{}'), JSON.parse(CANARY_PULL_SECRET));
    assert.equal(service.calls.source, 1);
    const seen = JSON.stringify(stack.api.listStatuses(cluster.id)) + stack.logs.join('\n');
    assert.equal(findCanary(seen), undefined, 'the source pull secret leaked');
    assert.ok(!seen.includes(BEARER), 'the bearer token leaked');
  });

  it('a 503 from the source fails the event, which is retried until the source answers', async () => {
    service.setOrganizationPullSecret('org-retry-1', CANARY_PULL_SECRET);
    service.injectFault({ route: 'source', status: 503, times: 2 });
    const before = service.calls.source;
    const cluster = await stack.seedCluster({ organizationId: 'org-retry-1' });
    await stack.publish(cluster);
    const status = await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    assert.equal(conditionOf(status, 'Health'), 'True/Healthy');
    assert.ok(service.calls.source - before >= 3, `source asked ${service.calls.source - before} times`);
    assert.ok(stack.logs.some((l) => l.includes('Could not read the pull secret from the account service') && l.includes(cluster.id)));
  });

  it('an invalid answer fails validation like a spec would (Applied False InvalidPullSecret, Health True)', async () => {
    service.setOrganizationPullSecret('org-bad-1', '{"auths":{"quay.io":{"email":"a@example.com"}}}');
    const cluster = await stack.seedCluster({ organizationId: 'org-bad-1' });
    await stack.publish(cluster);
    const status = await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Applied') === 'False/InvalidPullSecret');
    assert.equal(conditionOf(status, 'Health'), 'True/Healthy');
    assert.match(status.conditions.find((c) => c.type === 'Applied')?.message ?? '', /organization org-bad-1/);
    assert.equal(await store.getSecret(`hyperfleet-${cluster.id}-pull-secret`), undefined);
  });

  it('a cluster without an organization id waits (pull-secret-data precondition); an unknown organization is a 404 refusal', async () => {
    // Its spec has pull secret data, which this source ignores.
    const none = await stack.seedCluster();
    await stack.publish(none);
    const waiting = await stack.waitForStatus(none.id, (s) => conditionOf(s, 'Applied') === 'False/PreconditionNotMet');
    assert.equal(waiting.data?.precondition, 'pull-secret-data');
    const unknown = await stack.seedCluster({ organizationId: 'org-unknown' });
    await stack.publish(unknown);
    const refused = await stack.waitForStatus(unknown.id, (s) => conditionOf(s, 'Applied') === 'False/AccountServiceRefused');
    assert.match(refused.conditions.find((c) => c.type === 'Applied')?.message ?? '', /answered 404/);
  });
});
