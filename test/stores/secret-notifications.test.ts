// Rotation hooks: GCP rotation settings on the secrets the store creates (read back with the real
// SDK from the protocol-faithful test server, which validates them as the service does), and Secret
// Manager's event notifications, published by the test server to the real Pub/Sub emulator and
// consumed by the adapter, which reconciles the cluster of each of our secrets without any broker
// event. Loopback only, no credentials.
process.env.METADATA_SERVER_DETECTION = 'none';

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PubSub } from '@google-cloud/pubsub';
import { SecretManagerServiceClient } from '@google-cloud/secret-manager';
import { grpc } from 'google-gax';
import { validateAdapterConfig } from '../../src/adapter/config.js';
import { projectJobEnv } from '../../src/stores/config-env.js';
import { loadJobConfig } from '../../src/job/config.js';
import { readNotification } from '../../src/stores/gcp-secret-manager/notifications/read-notification.js';
import { clusterIdOfSecretId, defaultSecretId } from '../../src/pullsecret/identifiers.js';
import { gcpStoreFactory } from '../../src/stores/gcp-secret-manager/index.js';
import { parseStoreEnv } from '../../src/stores/registry.js';
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
const LABELS = {
  'managed-by': 'hyperfleet',
  adapter: 'pullsecret',
  'cluster-id': 'c1',
  'resource-type': 'pull-secret',
  'hyperfleet-version': 'v1',
};

/** The real SDK against the test server. */
function sdkClient(server: SecretManagerTestServer): SecretManagerServiceClient {
  return new SecretManagerServiceClient({
    apiEndpoint: '127.0.0.1',
    port: server.port,
    sslCreds: grpc.credentials.createInsecure(),
  });
}

const seconds = (value: unknown): number =>
  Number((value as { seconds?: unknown } | null | undefined)?.seconds ?? NaN);

describe('GCP rotation settings on new secrets', () => {
  let server: SecretManagerTestServer;
  let sdk: SecretManagerServiceClient;
  before(async () => {
    server = await startSecretManagerTestServer({ project: PROJECT });
    sdk = sdkClient(server);
  });
  after(async () => {
    await sdk?.close();
    await server?.stop();
  });

  const storeWith = (settings: Record<string, unknown>) =>
    gcpStoreFactory.create(
      gcpStoreFactory.configSchema.parse({
        projectId: PROJECT,
        endpoint: server.address,
        insecure: true,
        callTimeoutMs: 5000,
        ...settings,
      }),
    );

  test('a secret created with rotationPeriod and topics carries them (read back with GetSecret); next rotation defaults to now + period', async () => {
    const store = await storeWith({ rotationPeriod: '720h', topics: [TOPIC] });
    const start = Math.floor(Date.now() / 1000);
    try {
      await store.createSecret('rotating', LABELS);
    } finally {
      await store.close();
    }
    const end = Math.ceil(Date.now() / 1000);
    const [secret] = await sdk.getSecret({ name: `projects/${PROJECT}/secrets/rotating` });
    assert.equal(seconds(secret.rotation?.rotationPeriod), 720 * 3600);
    const next = seconds(secret.rotation?.nextRotationTime);
    assert.ok(next >= start + 720 * 3600 && next <= end + 720 * 3600, `next rotation ${next}`);
    assert.deepEqual(
      secret.topics?.map((t) => t.name),
      [TOPIC],
    );
  });

  test('a configured nextRotationTime is used as given; without rotation settings a secret has none', async () => {
    const when = new Date(Date.now() + 7 * 86_400_000);
    when.setUTCMilliseconds(0);
    const store = await storeWith({
      rotationPeriod: 86_400,
      nextRotationTime: when.toISOString(),
      topics: `${TOPIC},projects/${PUBSUB_PROJECT}/topics/audit`,
    });
    const plain = await storeWith({});
    try {
      await store.createSecret('scheduled', LABELS);
      await plain.createSecret('plain', LABELS);
    } finally {
      await store.close();
      await plain.close();
    }
    const [scheduled] = await sdk.getSecret({ name: `projects/${PROJECT}/secrets/scheduled` });
    assert.equal(seconds(scheduled.rotation?.nextRotationTime), when.getTime() / 1000);
    assert.equal(seconds(scheduled.rotation?.rotationPeriod), 86_400);
    assert.equal(scheduled.topics?.length, 2);
    const [none] = await sdk.getSecret({ name: `projects/${PROJECT}/secrets/plain` });
    assert.equal(none.rotation ?? null, null);
    assert.deepEqual(none.topics ?? [], []);
  });

  test('invalid rotation settings are refused up front with clear messages (config file and environment)', () => {
    const problems = (settings: Record<string, unknown>) => gcpStoreFactory.validate(settings);
    assert.match(
      problems({ rotationPeriod: '30m', topics: [TOPIC] }).join('\n'),
      /rotationPeriod: must be a duration of 1 hour to 100 years/,
    );
    assert.match(
      problems({ rotationPeriod: 'soon', topics: [TOPIC] }).join('\n'),
      /rotationPeriod: must be a duration/,
    );
    assert.match(
      problems({ rotationPeriod: '24h' }).join('\n'),
      /topics: rotationPeriod and nextRotationTime need topics/,
    );
    assert.match(
      problems({ topics: ['secret-events'] }).join('\n'),
      /topics: must be up to 10 Pub\/Sub topics projects\/PROJECT\/topics\/TOPIC/,
    );
    assert.match(
      problems({ nextRotationTime: 'tomorrow', topics: [TOPIC] }).join('\n'),
      /nextRotationTime: must be an RFC 3339 time/,
    );
    assert.deepEqual(problems({ rotationPeriod: '720h', topics: [TOPIC] }), []);
    const env = parseStoreEnv('gcp', {
      GCP_PROJECT_ID: PROJECT,
      GCP_ROTATION_PERIOD: '45m',
      GCP_SECRET_TOPICS: TOPIC,
    });
    assert.deepEqual(env.ok ? [] : env.invalid.map((line) => line.split(':')[0]), [
      'invalid environment variable GCP_ROTATION_PERIOD',
    ]);
    const ok = parseStoreEnv('gcp', {
      GCP_PROJECT_ID: PROJECT,
      GCP_ROTATION_PERIOD: '2h',
      GCP_SECRET_TOPICS: `${TOPIC}, projects/${PUBSUB_PROJECT}/topics/audit`,
    });
    assert.ok(ok.ok);
    assert.deepEqual(ok.value, {
      projectId: PROJECT,
      rotationPeriod: 7200,
      topics: [TOPIC, `projects/${PUBSUB_PROJECT}/topics/audit`],
      insecure: false,
      callTimeoutMs: 30000,
    });
  });

  test('Job mode: the rotation settings reach each Job through its environment', () => {
    const config = validateAdapterConfig({
      hyperfleetApi: { baseUrl: 'http://api:8000' },
      broker: { type: 'embedded' },
      store: {
        type: 'gcp',
        settings: { rotationPeriod: '720h', topics: [TOPIC, `projects/${PUBSUB_PROJECT}/topics/audit`] },
      },
      execution: { mode: 'job' },
    });
    const env = projectJobEnv(
      config,
      { kind: 'gcp', settings: config.store.settings },
      { projectId: PROJECT },
    );
    assert.equal(env.GCP_ROTATION_PERIOD, '720h', 'as configured; the Job parses it');
    assert.equal(env.GCP_SECRET_TOPICS, `${TOPIC},projects/${PUBSUB_PROJECT}/topics/audit`);
    const job = loadJobConfig({ ...env, CLUSTER_ID: 'c1', PULL_SECRET_DATA: '{"auths":{}}' });
    assert.deepEqual((job.store.config as { rotationPeriod?: number; topics?: string[] }).topics, [
      TOPIC,
      `projects/${PUBSUB_PROJECT}/topics/audit`,
    ]);
    assert.equal((job.store.config as { rotationPeriod?: number }).rotationPeriod, 2_592_000);
  });

  test('the test server refuses rotation without topics and a period under an hour with INVALID_ARGUMENT, as the service', async () => {
    const next = { seconds: Math.floor(Date.now() / 1000) + 86_400 };
    const create = async (secretId: string, secret: Record<string, unknown>) => {
      try {
        await sdk.createSecret({
          parent: `projects/${PROJECT}`,
          secretId,
          secret: { replication: { automatic: {} }, ...secret },
        });
        return undefined;
      } catch (err) {
        return err as { code?: number; details?: string };
      }
    };
    const noTopics = await create('no-topics', {
      rotation: { rotationPeriod: { seconds: 86_400 }, nextRotationTime: next },
    });
    assert.equal(noTopics?.code, grpc.status.INVALID_ARGUMENT);
    assert.match(noTopics?.details ?? '', /topics must be set/);
    const short = await create('short', {
      rotation: { rotationPeriod: { seconds: 1800 }, nextRotationTime: next },
      topics: [{ name: TOPIC }],
    });
    assert.equal(short?.code, grpc.status.INVALID_ARGUMENT);
    assert.match(short?.details ?? '', /at least 3600s/);
    const past = await create('past', {
      rotation: { nextRotationTime: { seconds: Math.floor(Date.now() / 1000) } },
      topics: [{ name: TOPIC }],
    });
    assert.equal(past?.code, grpc.status.INVALID_ARGUMENT);
    const badTopic = await create('bad-topic', { topics: [{ name: 'secret-events' }] });
    assert.equal(badTopic?.code, grpc.status.INVALID_ARGUMENT);
    for (const id of ['no-topics', 'short', 'past', 'bad-topic'])
      assert.equal(server.state.findSecret(id), undefined, id);
    assert.equal(
      await create('fine', {
        rotation: { rotationPeriod: { seconds: 3600 }, nextRotationTime: next },
        topics: [{ name: TOPIC }],
      }),
      undefined,
    );
  });
});

describe('reading Secret Manager notifications', () => {
  const message = (attributes: Record<string, string>, data: unknown = { name: attributes.secretId }) => ({
    data: Buffer.from(typeof data === 'string' ? data : JSON.stringify(data)),
    attributes,
  });
  const ours = 'projects/123456789/secrets/hyperfleet-cls-abc123-pull-secret';

  test('our secrets trigger on version, rotation, update and delete events; others are ignored or foreign', () => {
    for (const eventType of [
      'SECRET_VERSION_ADD',
      'SECRET_VERSION_DISABLE',
      'SECRET_VERSION_DESTROY',
      'SECRET_ROTATE',
      'SECRET_DELETE',
    ]) {
      assert.deepEqual(
        readNotification(
          message({ eventType, secretId: ours, dataFormat: 'JSON_API_V1' }, { name: `${ours}/versions/3` }),
        ),
        { eventType, outcome: 'triggered', clusterId: 'cls-abc123' },
      );
    }
    assert.equal(
      readNotification(message({ eventType: 'SECRET_CREATE', secretId: ours, dataFormat: 'JSON_API_V1' }))
        .outcome,
      'ignored',
    );
    assert.equal(
      readNotification({ data: Buffer.alloc(0), attributes: { eventType: 'TOPIC_CONFIGURED' } }).outcome,
      'ignored',
    );
    assert.equal(
      readNotification(
        message({
          eventType: 'SECRET_VERSION_ADD',
          secretId: 'projects/p/secrets/db-password',
          dataFormat: 'JSON_API_V1',
        }),
      ).outcome,
      'foreign',
    );
    assert.equal(
      readNotification(
        message({
          eventType: 'SECRET_VERSION_ADD',
          secretId: 'projects/p/secrets/hyperfleet-UPPER-pull-secret',
          dataFormat: 'JSON_API_V1',
        }),
      ).outcome,
      'foreign',
    );
    // The service names the project by number; data naming it by id is the same secret.
    assert.equal(
      readNotification(
        message(
          { eventType: 'SECRET_ROTATE', secretId: ours, dataFormat: 'JSON_API_V1' },
          { name: 'projects/p-1/secrets/hyperfleet-cls-abc123-pull-secret' },
        ),
      ).outcome,
      'triggered',
    );
    assert.equal(
      readNotification(
        message({ eventType: 'SECRET_SOMETHING_NEW', secretId: ours, dataFormat: 'JSON_API_V1' }),
      ).eventType,
      'other',
    );
    // The service's attributes in full (event-notifications page): a timestamp and, on version events, versionId.
    const full = {
      eventType: 'SECRET_VERSION_ADD',
      dataFormat: 'JSON_API_V1',
      secretId: ours,
      versionId: `${ours}/versions/2`,
      timestamp: '2021-01-20T11:17:45.081104-08:00',
    };
    assert.deepEqual(readNotification(message(full, { name: `${ours}/versions/2`, state: 'ENABLED' })), {
      eventType: 'SECRET_VERSION_ADD',
      outcome: 'triggered',
      clusterId: 'cls-abc123',
    });
  });

  test('clusterIdOfSecretId inverts defaultSecretId and refuses other names', () => {
    for (const id of ['cls-abc123', '019466a0-8f8e-7abc-9def-0123456789ab', 'a'])
      assert.equal(clusterIdOfSecretId(defaultSecretId(id)), id);
    for (const name of [
      'hyperfleet--pull-secret',
      'hyperfleet-Cls-pull-secret',
      'other-cls-pull-secret',
      'hyperfleet-cls-pull-secret-2',
      'hyperfleet-cls-',
    ])
      assert.equal(clusterIdOfSecretId(name), undefined, name);
  });

  test('malformed notifications are told apart with a fixed reason, never their content', () => {
    const cases = [
      message({ secretId: ours }),
      message({ eventType: 'SECRET_VERSION_ADD', secretId: 'hyperfleet-cls-abc123-pull-secret' }),
      message({ eventType: 'SECRET_VERSION_ADD', secretId: ours, dataFormat: 'JSON_API_V1' }, 'not json {'),
      message(
        { eventType: 'SECRET_VERSION_ADD', secretId: ours, dataFormat: 'JSON_API_V1' },
        { name: 'projects/p/secrets/other' },
      ),
      message({ eventType: 'SECRET_VERSION_ADD', secretId: ours, dataFormat: 'YAML' }),
      message({ eventType: 'SECRET_VERSION_ADD', secretId: ours, dataFormat: 'JSON' }),
      message({ eventType: 'SECRET_VERSION_ADD', secretId: ours, dataFormat: 'JSON_API_V1' }, [1, 2]),
    ];
    for (const c of cases) {
      const reading = readNotification(c);
      assert.equal(reading.outcome, 'malformed', JSON.stringify(c.attributes));
      assert.ok(!(reading.problem ?? '').includes('not json {'));
    }
  });

  test('the notifications section is validated: a subscription when enabled, and a gcp store', () => {
    const base = { hyperfleetApi: { baseUrl: 'http://127.0.0.1:1' }, broker: { type: 'embedded' } };
    assert.throws(
      () => validateAdapterConfig({ ...base, store: { type: 'gcp' }, notifications: { enabled: true } }),
      /notifications\.subscription/,
    );
    assert.throws(
      () =>
        validateAdapterConfig({
          ...base,
          store: { type: 'local', settings: { dir: 'x' } },
          notifications: { enabled: true, subscription: SUBSCRIPTION },
        }),
      /no provider uses the gcp store/,
    );
    assert.throws(
      () =>
        validateAdapterConfig({
          ...base,
          store: { type: 'gcp' },
          notifications: { enabled: true, subscription: 'a b' },
        }),
      /notifications\.subscription: must be a Pub\/Sub subscription id/,
    );
    const config = validateAdapterConfig({
      ...base,
      store: { type: 'gcp' },
      notifications: {
        enabled: true,
        subscription: `projects/${PUBSUB_PROJECT}/subscriptions/${SUBSCRIPTION}`,
      },
    });
    assert.equal(config.notifications.maxInFlight, 16);
    assert.equal(validateAdapterConfig({ ...base, store: { type: 'gcp' } }).notifications.enabled, false);
  });
});

describe('store notifications through the adapter (GCP test server publishing to the Pub/Sub emulator)', () => {
  let emulator: PubSubEmulator;
  let gcp: SecretManagerTestServer;
  let stack: AdapterStack;
  let pubsub: PubSub;
  let sdk: SecretManagerServiceClient;

  before(async () => {
    emulator = await startPubSubEmulator();
    pubsub = new PubSub({ projectId: PUBSUB_PROJECT, apiEndpoint: emulator.host, emulatorMode: true });
    const [topic] = await pubsub.createTopic('secret-events');
    await topic.createSubscription(SUBSCRIPTION);
    gcp = await startSecretManagerTestServer({
      project: PROJECT,
      notifications: { pubsubHost: emulator.host },
    });
    sdk = sdkClient(gcp);
    stack = await startAdapterStack({
      store: {
        type: 'gcp',
        settings: {
          endpoint: gcp.address,
          insecure: true,
          callTimeoutMs: 5000,
          rotationPeriod: '24h',
          topics: [TOPIC],
        },
      },
      notifications: {
        enabled: true,
        subscription: SUBSCRIPTION,
        projectId: PUBSUB_PROJECT,
        apiEndpoint: emulator.host,
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await sdk?.close();
    await gcp?.stop();
    await pubsub?.close();
    await emulator?.stop();
  });

  const metricsText = async () =>
    (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
  const notified = async (eventType: string, outcome: string) => {
    const match = new RegExp(
      `^pullsecret_store_notifications_total\\{store="gcp",event_type="${eventType}",outcome="${outcome}"\\} (\\d+)`,
      'm',
    ).exec(await metricsText());
    return Number(match?.[1] ?? 0);
  };
  const latestData = (secretId: string) => gcp.state.versionsOf(secretId)[0]?.data?.toString();

  test('someone else adds a version: the notification reconciles the cluster without a broker event, restoring the desired content', async () => {
    const cluster = await stack.seedCluster();
    const secretId = `hyperfleet-${cluster.id}-pull-secret`;
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    const created = gcp.state.findSecret(secretId);
    assert.equal(created?.rotation?.rotationPeriodSeconds, 86_400, 'created with the rotation settings');
    assert.deepEqual(created?.topics, [TOPIC]);
    const desired = latestData(secretId);
    // Our own version add is notified too (one no-op reconcile, no write).
    await until(
      'our own SECRET_VERSION_ADD',
      async () => (await notified('SECRET_VERSION_ADD', 'triggered')) >= 1,
    );
    const before = await notified('SECRET_VERSION_ADD', 'triggered');

    await sdk.addSecretVersion({
      parent: `projects/${PROJECT}/secrets/${secretId}`,
      payload: { data: Buffer.from('{"auths":{"evil.example.com":{"auth":"ZXZpbDpldmls"}}}') },
    });
    await until(
      'the desired content restored as a new version',
      () => gcp.state.versionsOf(secretId).length === 3 && latestData(secretId) === desired,
    );
    assert.ok((await notified('SECRET_VERSION_ADD', 'triggered')) > before);
    const reconciles = stack.logs.filter(
      (l) => l.includes('"operation":"store-notification"') && l.includes(cluster.id),
    );
    assert.ok(reconciles.length >= 1);
    assert.ok(
      stack.logs.some((l) => l.includes('"event_id":"store-notification-') && l.includes(cluster.id)),
      'reconciled through the pipeline',
    );
  });

  test('a disabled version and the rotation time are noticed too', async () => {
    const cluster = await stack.seedCluster();
    const secretId = `hyperfleet-${cluster.id}-pull-secret`;
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    const desired = latestData(secretId);
    await sdk.disableSecretVersion({ name: `projects/${PROJECT}/secrets/${secretId}/versions/1` });
    // With its only version disabled, the reconcile writes the content again as version 2.
    await until(
      'the content written again after the disable',
      () => gcp.state.versionsOf(secretId)[0]?.state === 'ENABLED' && latestData(secretId) === desired,
    );
    await until(
      'SECRET_VERSION_DISABLE counted',
      async () => (await notified('SECRET_VERSION_DISABLE', 'triggered')) >= 1,
    );
    const rotations = await notified('SECRET_ROTATE', 'triggered');
    gcp.rotate(secretId);
    await until(
      'SECRET_ROTATE counted',
      async () => (await notified('SECRET_ROTATE', 'triggered')) > rotations,
    );
  });

  test('a notification for a foreign secret is ignored', async () => {
    const before = await notified('SECRET_VERSION_ADD', 'foreign');
    const logged = stack.logs.length;
    await sdk.createSecret({
      parent: `projects/${PROJECT}`,
      secretId: 'db-password',
      secret: { replication: { automatic: {} }, topics: [{ name: TOPIC }] },
    });
    await sdk.addSecretVersion({
      parent: `projects/${PROJECT}/secrets/db-password`,
      payload: { data: Buffer.from('hunter2-foreign-payload') },
    });
    await until(
      'the foreign notification counted',
      async () => (await notified('SECRET_VERSION_ADD', 'foreign')) > before,
    );
    assert.ok((await notified('SECRET_CREATE', 'foreign')) >= 1);
    // Created with topics: the service's test message first, which needs no reconcile.
    await until('TOPIC_CONFIGURED counted', async () => (await notified('TOPIC_CONFIGURED', 'ignored')) >= 1);
    const since = stack.logs.slice(logged);
    assert.ok(
      !since.some((l) => l.includes('db-password') || l.includes('hunter2')),
      'no foreign name or payload in logs',
    );
  });

  test('malformed messages are acked and counted; the consumer keeps working', async () => {
    const topic = pubsub.topic('secret-events');
    const before = await notified('other', 'malformed');
    const beforeAdd = await notified('SECRET_VERSION_ADD', 'malformed');
    await topic.publishMessage({ data: Buffer.from('garbage-without-attributes') });
    await topic.publishMessage({
      data: Buffer.from('{not json'),
      attributes: {
        eventType: 'SECRET_VERSION_ADD',
        secretId: `projects/${PROJECT}/secrets/hyperfleet-x1-pull-secret`,
        dataFormat: 'JSON_API_V1',
      },
    });
    await topic.publishMessage({
      data: Buffer.from('{}'),
      attributes: { eventType: 'SECRET_VERSION_ADD', secretId: 'no-secret-name' },
    });
    await until(
      'three malformed counted',
      async () =>
        (await notified('other', 'malformed')) -
          before +
          (await notified('SECRET_VERSION_ADD', 'malformed')) -
          beforeAdd ===
        3,
    );
    assert.ok(
      stack.logs.some(
        (l) => l.includes('Ignored a malformed store notification') && l.includes('data is not JSON'),
      ),
    );
    assert.ok(
      !stack.logs.some((l) => l.includes('garbage-without-attributes') || l.includes('{not json')),
      'message data never logged',
    );
    // Still consuming: a later notification of ours is handled.
    const cluster = await stack.seedCluster();
    const triggered = await notified('SECRET_ROTATE', 'triggered');
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    gcp.rotate(`hyperfleet-${cluster.id}-pull-secret`);
    await until(
      'a later notification handled',
      async () => (await notified('SECRET_ROTATE', 'triggered')) > triggered,
    );
    // Acked: not delivered again (the count is still exactly three).
    assert.equal(
      (await notified('other', 'malformed')) -
        before +
        (await notified('SECRET_VERSION_ADD', 'malformed')) -
        beforeAdd,
      3,
    );
  });

  test('leak canary: no pull secret byte in notifications, logs or metrics', async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: CANARY_PULL_SECRET } });
    const secretId = `hyperfleet-${cluster.id}-pull-secret`;
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    const desired = latestData(secretId);
    await sdk.addSecretVersion({
      parent: `projects/${PROJECT}/secrets/${secretId}`,
      payload: { data: Buffer.from(CANARY_PULL_SECRET.replace('canary', 'c4nary')) },
    });
    await until(
      'restored',
      () => gcp.state.versionsOf(secretId).length === 3 && latestData(secretId) === desired,
    );
    await gcp.notifications?.flush();
    const published = gcp.notifications?.published ?? [];
    assert.ok(
      published.some(
        (n) => n.attributes.secretId?.endsWith(secretId) && n.attributes.eventType === 'SECRET_VERSION_ADD',
      ),
    );
    assert.equal(
      findCanary(published.map((n) => n.data + JSON.stringify(n.attributes)).join('\n')),
      undefined,
      'notifications carry no payload',
    );
    assert.equal(findCanary(stack.logs.join('\n')), undefined, 'logs');
    assert.equal(findCanary(await metricsText()), undefined, 'metrics');
  });

  test('a missing subscription: the adapter starts, warns, keeps serving events, and consumes once the subscription exists', async () => {
    const other = await startAdapterStack({
      store: {
        type: 'gcp',
        settings: { endpoint: gcp.address, insecure: true, callTimeoutMs: 5000, topics: [TOPIC] },
      },
      notifications: {
        enabled: true,
        subscription: 'late-subscription',
        projectId: PUBSUB_PROJECT,
        apiEndpoint: emulator.host,
      },
    });
    try {
      await until('the stream error logged', () =>
        other.logs.some((l) => l.includes('Store notification stream error') && l.includes('"grpc_code":5')),
      );
      const cluster = await other.seedCluster();
      await other.publish(cluster);
      await other.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
      // The subscription is created afterwards: the re-opened stream receives what is published next.
      await pubsub.topic('secret-events').createSubscription('late-subscription');
      const metric = async () =>
        Number(
          /^pullsecret_store_notifications_total\{store="gcp",event_type="SECRET_ROTATE",outcome="triggered"\} (\d+)/m.exec(
            await (await fetch(`http://127.0.0.1:${other.adapter.metricsPort}/metrics`)).text(),
          )?.[1] ?? 0,
        );
      await until(
        'a notification consumed on the late subscription',
        async () => {
          gcp.rotate(`hyperfleet-${cluster.id}-pull-secret`);
          return (await metric()) > 0;
        },
        30_000,
      );
    } finally {
      await other.stop();
    }
  });

  test('destroying a version and deleting the secret are published with the service attributes', async () => {
    const cluster = await stack.seedCluster();
    const secretId = `hyperfleet-${cluster.id}-pull-secret`;
    const name = `projects/${PROJECT}/secrets/${secretId}`;
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable');
    const destroyed = await notified('SECRET_VERSION_DESTROY', 'triggered');
    await sdk.addSecretVersion({ parent: name, payload: { data: Buffer.from('{"auths":{}}') } });
    await sdk.destroySecretVersion({ name: `${name}/versions/1` });
    await until(
      'SECRET_VERSION_DESTROY counted',
      async () => (await notified('SECRET_VERSION_DESTROY', 'triggered')) > destroyed,
    );
    const deleted = await notified('SECRET_DELETE', 'triggered');
    await sdk.deleteSecret({ name });
    await until(
      'SECRET_DELETE counted',
      async () => (await notified('SECRET_DELETE', 'triggered')) > deleted,
    );
    await gcp.notifications?.flush();
    // As the service sends them: the project number in names, dataFormat JSON_API_V1, a timestamp.
    const numbered = `projects/${gcp.projectNumber}/secrets/${secretId}`;
    const mine = (gcp.notifications?.published ?? []).filter((n) => n.attributes.secretId === numbered);
    const withoutTime = ({ timestamp, ...rest }: Record<string, string>) =>
      Number.isNaN(Date.parse(timestamp ?? '')) ? { ...rest, timestamp } : rest;
    const destroy = mine.find((n) => n.attributes.eventType === 'SECRET_VERSION_DESTROY');
    const destroyAttributes = {
      eventType: 'SECRET_VERSION_DESTROY',
      secretId: numbered,
      versionId: `${numbered}/versions/1`,
      dataFormat: 'JSON_API_V1',
    };
    assert.deepEqual(withoutTime(destroy?.attributes ?? {}), destroyAttributes);
    assert.equal(
      (JSON.parse(destroy?.data ?? '{}') as { name?: string; state?: string }).name,
      `${numbered}/versions/1`,
    );
    assert.equal((JSON.parse(destroy?.data ?? '{}') as { state?: string }).state, 'DESTROYED');
    const deletion = mine.find((n) => n.attributes.eventType === 'SECRET_DELETE');
    assert.deepEqual(withoutTime(deletion?.attributes ?? {}), {
      eventType: 'SECRET_DELETE',
      secretId: numbered,
      dataFormat: 'JSON_API_V1',
    });
    assert.equal(
      (JSON.parse(deletion?.data ?? '{}') as { rotation?: { rotationPeriod?: string } }).rotation
        ?.rotationPeriod,
      '86400s',
    );
    assert.equal(gcp.notifications?.failures, 0);
  });
});
