import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PubSub } from '@google-cloud/pubsub';
import { createBroker } from '../../src/brokers/registry.js';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { startRabbitMq, type RabbitMqServer } from '../support/rabbitmq.js';
import { startPubSubEmulator, type PubSubEmulator } from '../support/pubsub-emulator.js';

// The adapter through real brokers: a throwaway RabbitMQ node and the real Pub/Sub emulator.

process.env.METADATA_SERVER_DETECTION = 'none';
const available = (s: {
  data?: Record<string, unknown>;
  conditions: Array<{ type: string; status: string }>;
}) => s.conditions.some((c) => c.type === 'Available' && c.status === 'True');

/** Cluster ids handled by a replica, from its `execute` log lines. */
function handled(logs: string[]): Set<string> {
  const ids = new Set<string>();
  for (const line of logs) {
    const entry = JSON.parse(line) as { operation?: string; cluster_id?: string };
    if (entry.operation === 'execute' && entry.cluster_id) ids.add(entry.cluster_id);
  }
  return ids;
}

describe('adapter on RabbitMQ', () => {
  let rabbit: RabbitMqServer;
  let stack: AdapterStack;
  before(async () => {
    rabbit = await startRabbitMq();
    stack = await startAdapterStack({
      broker: {
        type: 'rabbitmq',
        url: rabbit.url,
        exchange: 'hyperfleet-clusters',
        topic: 'cluster-events',
        subscriptionId: 'pullsecret',
        maxInFlight: 8,
        retryDelayMs: 50,
        reconnectBaseDelayMs: 100,
        reconnectMaxDelayMs: 1000,
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await rabbit?.stop();
  });

  test('happy path and duplicate delivery: one version, status reported each time', async () => {
    const cluster = await stack.seedCluster();
    await stack.publish(cluster);
    await stack.publish(cluster);
    await stack.publish(cluster);
    const status = await stack.waitForStatus(cluster.id, available);
    assert.equal(status.data?.secretVersion, '1');
    await sleep(300);
    assert.equal(
      stack.api.listStatuses(cluster.id).find((s) => s.adapter === 'pullsecret')?.data?.secretVersion,
      '1',
    );
  });

  test('two replicas on one queue: every cluster handled, each by one replica', async () => {
    const replica = await stack.startReplica();
    const clusters = await Promise.all(Array.from({ length: 12 }, () => stack.seedCluster()));
    for (const c of clusters) await stack.publish(c);
    for (const c of clusters) await stack.waitForStatus(c.id, available);
    const first = handled(stack.logs);
    const second = handled(replica.logs);
    const ids = clusters.map((c) => c.id);
    assert.ok(
      ids.every((id) => first.has(id) || second.has(id)),
      'every cluster handled',
    );
    assert.ok(
      ids.every((id) => !(first.has(id) && second.has(id))),
      'no cluster handled by both replicas',
    );
    assert.ok(
      ids.some((id) => second.has(id)),
      'the second replica took a share of the queue',
    );
  });

  test('gcp store without Google credentials: the adapter reports AuthenticationFailed and keeps running', async () => {
    // A separate adapter process (an exchange of its own), as deployed: a stray rejection would end it.
    const dir = mkdtempSync(join(tmpdir(), 'ps-no-credentials-'));
    const broker = {
      type: 'rabbitmq' as const,
      url: rabbit.url,
      exchange: 'no-credentials',
      topic: 'no-credentials-events',
      subscriptionId: 'pullsecret',
      retryDelayMs: 50,
    };
    const config = {
      hyperfleetApi: { baseUrl: stack.api.url, timeoutMs: 2000 },
      broker,
      store: { type: 'gcp' },
      kubernetes: { target: 'none' },
      server: { healthPort: 0, metricsPort: 0, host: '127.0.0.1', drainSeconds: 1 },
    };
    writeFileSync(join(dir, 'adapter.yaml'), JSON.stringify(config));
    const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
    const env = {
      PATH: process.env.PATH,
      HOME: dir,
      METADATA_SERVER_DETECTION: 'none',
      GOOGLE_CLOUD_DISABLE_DIRECT_PATH: 'true',
    };
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', main, 'adapter', '--config', join(dir, 'adapter.yaml')],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const publisher = await createBroker(broker);
    try {
      const failed = (s: Parameters<typeof available>[0]) =>
        s.conditions.some(
          (c) =>
            c.type === 'Applied' &&
            c.status === 'False' &&
            (c as { reason?: string }).reason === 'AuthenticationFailed',
        );
      for (const attempt of [1, 2]) {
        const cluster = await stack.seedCluster();
        const event = {
          specversion: '1.0',
          id: `no-credentials-${attempt}`,
          source: 'hyperfleet-sentinel',
          type: 'com.redhat.hyperfleet.cluster.reconcile',
          data: { id: cluster.id, kind: 'Cluster', generation: cluster.generation },
        };
        await publisher.publish(Buffer.from(JSON.stringify(event)));
        await stack
          .waitForStatus(cluster.id, failed, 30_000)
          .catch((err: Error) => assert.fail(`${err.message}\nadapter output:\n${output}`));
      }
      await sleep(500);
      assert.equal(child.exitCode, null, `the adapter is still running:\n${output}`);
      assert.ok(
        !output.includes('stray error caught by the process guard'),
        'the root cause leaves no stray rejection',
      );
      assert.ok(!output.includes('    at '), 'no raw stack trace');
    } finally {
      await publisher.stop();
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('broker restart mid-stream: the adapter reconnects and every event is handled', async () => {
    const before = await Promise.all(Array.from({ length: 3 }, () => stack.seedCluster()));
    for (const c of before) await stack.publish(c);
    await rabbit.restart();
    const deadline = Date.now() + 30_000;
    while (!stack.adapter.ready() && Date.now() < deadline) await sleep(100);
    assert.ok(stack.adapter.ready(), 'the adapter reconnected');
    const afterRestart = await Promise.all(Array.from({ length: 3 }, () => stack.seedCluster()));
    for (const c of afterRestart) await stack.publish(c);
    // Events published before the restart are persistent on a durable queue: handled before it, or
    // redelivered after it.
    for (const c of [...before, ...afterRestart]) await stack.waitForStatus(c.id, available, 30_000);
  });
});

describe('adapter on Google Pub/Sub (emulator)', () => {
  let emulator: PubSubEmulator;
  let stack: AdapterStack;
  const broker = () => ({
    type: 'pubsub',
    projectId: 'emulator-project',
    apiEndpoint: emulator.host,
    topic: 'cluster-events',
    subscriptionId: 'pullsecret-adapter',
    maxInFlight: 8,
  });
  before(async () => {
    emulator = await startPubSubEmulator();
    stack = await startAdapterStack({ broker: broker() });
  });
  after(async () => {
    await stack?.stop();
    await emulator?.stop();
  });

  test('happy path, duplicate delivery, preconditions not met', async () => {
    const cluster = await stack.seedCluster();
    await stack.publish(cluster);
    await stack.publish(cluster);
    const status = await stack.waitForStatus(cluster.id, available);
    assert.equal(status.data?.secretVersion, '1');
    const waiting = await stack.seedCluster({}, []);
    await stack.publish(waiting);
    const skipped = await stack.waitForStatus(
      waiting.id,
      (s) => conditionOf(s, 'Applied') === 'False/PreconditionNotMet',
    );
    assert.equal(conditionOf(skipped, 'Health'), 'True/Healthy');
  });

  test('a malformed event goes to the dead-letter topic, not back to the adapter', async () => {
    const client = new PubSub({
      projectId: 'emulator-project',
      apiEndpoint: emulator.host,
      emulatorMode: true,
    });
    const [dlq] = await client
      .topic('pullsecret-adapter-dlq')
      .subscription('pullsecret-adapter-dlq')
      .get({ autoCreate: true });
    const received = new Promise<string>((resolve) =>
      dlq.once('message', (m: { data: Buffer; ack(): void }) => {
        m.ack();
        resolve(m.data.toString());
      }),
    );
    await stack.adapter.broker.publish(Buffer.from('{"not":"a cloudevent"}'));
    assert.equal(
      await Promise.race([received, sleep(15_000).then(() => 'timeout')]),
      '{"not":"a cloudevent"}',
    );
    await dlq.close();
    await client.close();
  });

  test('two replicas on one subscription: every cluster handled, each by one replica', async () => {
    const replica = await stack.startReplica();
    const clusters = await Promise.all(Array.from({ length: 8 }, () => stack.seedCluster()));
    for (const c of clusters) {
      await stack.publish(c);
      await sleep(50);
    }
    for (const c of clusters) await stack.waitForStatus(c.id, available, 20_000);
    const first = handled(stack.logs);
    const second = handled(replica.logs);
    assert.ok(clusters.every((c) => first.has(c.id) || second.has(c.id)));
    assert.ok(clusters.every((c) => !(first.has(c.id) && second.has(c.id))));
  });
});
