// The rollback pin with GCP store notifications on (the GCP test server publishing Secret Manager
// notifications to the real Pub/Sub emulator, the adapter consuming them): an admin rollback holds
// through its own version-added notification, a resync and an admin reconcile, and ends by a new
// spec, by a release and at its expiry. Loopback only; canary credentials.
process.env.METADATA_SERVER_DETECTION = 'none';

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PubSub } from '@google-cloud/pubsub';
import { adminRequest } from '../../src/admin/admin-client.js';
import { parseTokenState } from '../../src/admin/token-state.js';
import type { Cluster } from '../../src/hyperfleet/index.js';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { CANARY_PULL_SECRET, findCanary } from '../support/fixtures.js';
import { startPubSubEmulator, type PubSubEmulator } from '../support/pubsub-emulator.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import { until } from '../support/until.js';

const PROJECT = 'customer-prod-12345';
const PUBSUB_PROJECT = 'emulator-project';
const TOPIC = `projects/${PUBSUB_PROJECT}/topics/secret-events`;
const SUBSCRIPTION = 'pullsecret-store-events';
/** Pull secret number `n`: the canary's credentials, a different e-mail. */
const content = (n: number) =>
  CANARY_PULL_SECRET.replace(/"email":"canary@example\.com"/g, `"email":"ops${n}@example.com"`);

describe('rollback pin with store notifications on', () => {
  let emulator: PubSubEmulator;
  let pubsub: PubSub;
  let gcp: SecretManagerTestServer;
  let stack: AdapterStack;
  let server: string;
  let tokenFile: string;

  before(async () => {
    emulator = await startPubSubEmulator();
    pubsub = new PubSub({ projectId: PUBSUB_PROJECT, apiEndpoint: emulator.host, emulatorMode: true });
    const [topic] = await pubsub.createTopic('secret-events');
    await topic.createSubscription(SUBSCRIPTION);
    gcp = await startSecretManagerTestServer({
      project: PROJECT,
      notifications: { pubsubHost: emulator.host },
    });
    tokenFile = join(await mkdtemp(join(tmpdir(), 'ps-pin-')), 'admin-tokens.json');
    stack = await startAdapterStack({
      store: {
        type: 'gcp',
        settings: { endpoint: gcp.address, insecure: true, callTimeoutMs: 5000, topics: [TOPIC] },
      },
      notifications: {
        enabled: true,
        subscription: SUBSCRIPTION,
        projectId: PUBSUB_PROJECT,
        apiEndpoint: emulator.host,
      },
      admin: { enabled: true, host: '127.0.0.1', port: 0, tokens: { file: tokenFile } },
    });
    server = `http://127.0.0.1:${stack.adapter.admin.server?.port ?? 0}`;
  });
  after(async () => {
    await stack?.stop();
    await gcp?.stop();
    await pubsub?.close();
    await emulator?.stop();
  });

  const token = async () => parseTokenState(await readFile(tokenFile, 'utf8'), 'test').current.token;
  const admin = async (clusterId: string, action: string, body?: Record<string, string>) =>
    adminRequest({
      server,
      method: 'POST',
      path: `/clusters/${clusterId}/${action}`,
      token: await token(),
      ...(body === undefined ? {} : { body }),
    });
  const secretIdOf = (id: string) => `hyperfleet-${id}-pull-secret`;
  const versions = (id: string) =>
    gcp.state.findSecret(secretIdOf(id)) === undefined ? [] : gcp.state.versionsOf(secretIdOf(id));
  const latest = (id: string) => versions(id)[0]?.data?.toString();
  const manifest = async (id: string) => {
    const yaml = await readFile(
      join(stack.dir, 'manifests', `clusters-${id}`, `${id}-pull-secret.yaml`),
      'utf8',
    );
    const encoded = /\.dockerconfigjson: (\S+)/.exec(yaml)?.[1] ?? '';
    return Buffer.from(encoded, 'base64').toString();
  };
  const metricsText = async () =>
    (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
  const versionAdds = async () =>
    Number(
      /^pullsecret_store_notifications_total\{store="gcp",event_type="SECRET_VERSION_ADD",outcome="triggered"\} (\d+)/m.exec(
        await metricsText(),
      )?.[1] ?? 0,
    );
  const pinFiles = async () => (await readdir(join(stack.dir, 'manifests', '.pins')).catch(() => [])).sort();

  /** A cluster at content 1 (generation 1), then content 2 (generation 2): versions 1 and 2. */
  async function twoGenerations(): Promise<Cluster> {
    const cluster = await stack.seedCluster({ pullSecret: { data: content(1) } });
    await stack.publish(cluster);
    await until('version 1', () => versions(cluster.id).length === 1);
    const patched = await stack.request('PATCH', `/clusters/${cluster.id}`, {
      spec: { ...cluster.spec, pullSecret: { data: content(2) } },
    });
    assert.equal(patched.status, 200);
    await stack.publish({ id: cluster.id, generation: 2 });
    await stack.waitForStatus(
      cluster.id,
      (s) => s.observed_generation === 2 && s.data?.secretVersion === '2',
    );
    return { ...cluster, generation: 2 };
  }

  /** Rolls back to version 1 through the admin API and waits for its own notification to be handled. */
  async function rollBack(cluster: Cluster, body: Record<string, string> = {}) {
    const notifiedBefore = await versionAdds();
    const answer = await admin(cluster.id, 'rollback', { reason: 'bad credential in v2', ...body });
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    await until("the rollback's own SECRET_VERSION_ADD", async () => (await versionAdds()) > notifiedBefore);
    // Handled: a reconcile after it has run in the cluster's slot (the notification's was before it or a no-op).
    assert.equal((await admin(cluster.id, 'reconcile')).status, 200);
    return answer.json as Record<string, unknown>;
  }

  test('survives its own notification, a resync and an admin reconcile; a repeat writes nothing; ends by a new spec', async () => {
    const cluster = await twoGenerations();
    const view = await rollBack(cluster);
    assert.deepEqual(
      [view.fromVersion, view.restoredVersion, view.version, view.outcome],
      ['2', '1', '3', 'updated'],
    );
    assert.equal((view.pin as { reason?: string }).reason, 'bad credential in v2');
    assert.equal(versions(cluster.id).length, 3, 'no version written after the rollback');
    assert.equal(latest(cluster.id), content(1));
    assert.equal(await manifest(cluster.id), content(1));

    // A resync: the Sentinel sends the same generation again.
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Applied') === 'True/RolledBackPinned');
    assert.equal((await admin(cluster.id, 'reconcile')).status, 200);
    assert.equal(versions(cluster.id).length, 3);
    assert.equal(await manifest(cluster.id), content(1));
    const status = await stack.waitForStatus(cluster.id, (s) => s.data?.pin !== undefined);
    assert.equal(conditionOf(status, 'Applied'), 'True/RolledBackPinned');
    assert.deepEqual(Object.keys(status.data?.pin as object).sort(), [
      'at',
      'by',
      'reason',
      'sourceVersion',
      'version',
    ]);
    assert.match(
      String((status.data?.pin as { by: string }).by),
      /^admin-api \(current token, 127\.0\.0\.1\)$/,
    );

    // Repeated: 200, nothing new written.
    const again = await admin(cluster.id, 'rollback');
    assert.equal(again.status, 200, JSON.stringify(again.json));
    assert.deepEqual(
      [(again.json as Record<string, unknown>).version, (again.json as Record<string, unknown>).outcome],
      ['3', 'unchanged'],
    );
    assert.equal(versions(cluster.id).length, 3);

    // The pin object holds digests and names, never a credential.
    const files = await pinFiles();
    assert.ok(files.includes(`${cluster.id}.json`));
    const pinText = await readFile(join(stack.dir, 'manifests', '.pins', `${cluster.id}.json`), 'utf8');
    assert.equal(findCanary(pinText), undefined);
    assert.equal(findCanary(JSON.stringify([view, again.json, status]) + stack.logs.join('\n')), undefined);

    // A new generation with different content ends the pin.
    await stack.request('PATCH', `/clusters/${cluster.id}`, {
      spec: { ...cluster.spec, pullSecret: { data: content(3) } },
    });
    await stack.publish({ id: cluster.id, generation: 3 });
    await until('the new spec served', () => latest(cluster.id) === content(3));
    const after = await stack.waitForStatus(cluster.id, (s) => s.observed_generation === 3);
    assert.equal(after.data?.pin, undefined);
    assert.notEqual(conditionOf(after, 'Applied'), 'True/RolledBackPinned');
    assert.ok(!(await pinFiles()).includes(`${cluster.id}.json`));
    assert.ok(stack.logs.some((l) => l.includes('"ended":"spec-changed"') && l.includes(cluster.id)));
  });

  test('ends by a release (admin API): the spec is served again', async () => {
    const cluster = await twoGenerations();
    await rollBack(cluster);
    assert.equal(latest(cluster.id), content(1));
    const released = await admin(cluster.id, 'rollback-release');
    assert.equal(released.status, 200, JSON.stringify(released.json));
    assert.equal((released.json as { released: boolean }).released, true);
    await until('the spec served again', () => latest(cluster.id) === content(2));
    assert.equal(await manifest(cluster.id), content(2));
    const none = await admin(cluster.id, 'rollback-release');
    assert.deepEqual(none.json, { id: cluster.id, released: false });
  });

  test('ends at its expiry', async () => {
    const cluster = await twoGenerations();
    const view = await rollBack(cluster, { expiresIn: '1s' });
    const expiresAt = Date.parse((view.pin as { expiresAt: string }).expiresAt);
    assert.ok(expiresAt > Date.now() - 60_000);
    await until('the pin has expired', () => Date.now() > expiresAt);
    await stack.publish(cluster);
    await until('the spec served again', () => latest(cluster.id) === content(2));
    assert.ok(stack.logs.some((l) => l.includes('"ended":"expired"') && l.includes(cluster.id)));
    const refused = await admin(cluster.id, 'rollback', { expiresIn: 'soon' });
    assert.equal(refused.status, 400);
  });
});
