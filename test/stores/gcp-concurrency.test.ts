// Concurrent writers of one secret on the Secret Manager test server, through the official SDK:
// independent store clients (adapter replicas, Jobs) pushing at once, with and without the write
// intent, and `run-job` processes. Everything stays on loopback without Google credentials.
process.env.METADATA_SERVER_DETECTION = 'none';

import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gcpStoreFactory } from '../../src/stores/gcp-secret-manager/index.js';
import { WRITE_INTENT_ANNOTATION } from '../../src/stores/gcp-secret-manager/write-intent.js';
import { pushSecret } from '../../src/stores/push.js';
import type { SecretStore } from '../../src/stores/store.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import { baseEnv, finalLine, runCli } from '../support/cli.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';

const PROJECT = 'race-project';
const CLUSTER = '019466a0-8f8e-7abc-9def-0123456789ae';
const SECRET_ID = `hyperfleet-${CLUSTER}-pull-secret`;
const LABELS = { 'managed-by': 'hyperfleet', 'cluster-id': CLUSTER };
const RETRY = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 };
const OTHER_PULL_SECRET = VALID_PULL_SECRET.replace('test@example.com', 'ops@example.com');
const WRITERS = 8;
const ROUNDS = 10;
const FOUR_PERMISSIONS = [
  'secretmanager.secrets.create',
  'secretmanager.secrets.get',
  'secretmanager.versions.add',
  'secretmanager.versions.access',
];

let server: SecretManagerTestServer;
const stores: SecretStore[] = [];

/** `count` independent clients (own gRPC channel, own writer id), as separate replicas would have. */
async function clients(count: number, writeIntent: boolean): Promise<SecretStore[]> {
  const made = await Promise.all(
    Array.from({ length: count }, () =>
      gcpStoreFactory.create({
        projectId: PROJECT,
        endpoint: server.address,
        insecure: true,
        callTimeoutMs: 5_000,
        writeIntent,
      }),
    ),
  );
  stores.push(...made);
  return made;
}

function push(store: SecretStore, data: string) {
  return pushSecret(
    store,
    { secretId: SECRET_ID, labels: LABELS, payload: Buffer.from(data) },
    { retry: RETRY, conflictWaitMs: 30_000 },
  );
}

/** Each round: the secret holds OTHER_PULL_SECRET, and every writer pushes VALID_PULL_SECRET at once (an update, as after a change). */
async function updateRounds(writers: SecretStore[]): Promise<number[]> {
  const counts: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    server.state.clear();
    server.state.seedSecret(SECRET_ID, { labels: LABELS, versions: [{ data: OTHER_PULL_SECRET }] });
    await Promise.all(writers.map((w) => push(w, VALID_PULL_SECRET)));
    const datas = versionData();
    assert.equal(datas.at(-1), OTHER_PULL_SECRET);
    assert.ok(
      datas.slice(0, -1).every((d) => d === VALID_PULL_SECRET),
      'every new version holds the pushed content',
    );
    counts.push(datas.length - 1);
  }
  return counts;
}

function versionData(): string[] {
  return server.state.versionsOf(SECRET_ID).map((v) => (v.data ?? Buffer.alloc(0)).toString());
}

before(async () => {
  server = await startSecretManagerTestServer({ project: PROJECT });
});
after(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await server.stop();
});
beforeEach(() => {
  server.state.clear();
  server.setGrantedPermissions(undefined);
});

describe('with the write intent (SECRET_MANAGER_WRITE_INTENT=true)', () => {
  test(`${WRITERS} clients pushing the same data at once, ${ROUNDS} rounds: exactly one version each round`, async () => {
    const writers = await clients(WRITERS, true);
    const counts: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      server.state.clear();
      const results = await Promise.all(writers.map((w) => push(w, VALID_PULL_SECRET)));
      counts.push(server.state.versionsOf(SECRET_ID).length);
      assert.equal(
        results.filter((r) => r.outcome === 'created').length,
        1,
        `round ${round}: one writer created it`,
      );
      assert.equal(
        server.state.findSecret(SECRET_ID)?.annotations[WRITE_INTENT_ANNOTATION],
        undefined,
        'the intent is cleared',
      );
    }
    console.log(`versions per round with the write intent: ${counts.join(' ')}`);
    assert.deepEqual(counts, Array<number>(ROUNDS).fill(1));
  });

  test(`${WRITERS} clients updating to the same data at once, ${ROUNDS} rounds: exactly one new version each round`, async () => {
    const counts = await updateRounds(await clients(WRITERS, true));
    console.log(`new versions per update round with the write intent: ${counts.join(' ')}`);
    assert.deepEqual(counts, Array<number>(ROUNDS).fill(1));
  });

  test('two datas at once: every version holds one of them, no two consecutive versions alike', async () => {
    const writers = await clients(WRITERS, true);
    await Promise.all(writers.map((w, i) => push(w, i % 2 === 0 ? VALID_PULL_SECRET : OTHER_PULL_SECRET)));
    const datas = versionData();
    console.log(`versions with two datas and the write intent: ${datas.length}`);
    assert.ok(datas.every((d) => d === VALID_PULL_SECRET || d === OTHER_PULL_SECRET));
    for (let i = 1; i < datas.length; i++) assert.notEqual(datas[i], datas[i - 1]);
  });

  test('a live intent of another writer is waited for; an expired one is taken over; other annotations are kept', async () => {
    const [writer] = await clients(1, true);
    server.state.seedSecret(SECRET_ID, { labels: LABELS });
    const secret = server.state.findSecret(SECRET_ID);
    assert.ok(secret && writer);
    secret.annotations = {
      owner: 'team-a',
      [WRITE_INTENT_ANNOTATION]: `writer=ghost/1/x;expires=${new Date(Date.now() + 1_500).toISOString()}`,
    };
    const first = await push(writer, VALID_PULL_SECRET);
    assert.equal(first.outcome, 'created');
    assert.deepEqual(secret.annotations, { owner: 'team-a' });

    secret.annotations = {
      owner: 'team-a',
      [WRITE_INTENT_ANNOTATION]: `writer=ghost/1/x;expires=${new Date(Date.now() - 1_000).toISOString()}`,
    };
    assert.equal((await push(writer, OTHER_PULL_SECRET)).outcome, 'updated');
    assert.deepEqual(versionData(), [OTHER_PULL_SECRET, VALID_PULL_SECRET]);
    assert.deepEqual(secret.annotations, { owner: 'team-a' });
  });

  test('without secretmanager.secrets.update the write fails clearly, naming the permission and the switch, and adds nothing', async () => {
    const [writer] = await clients(1, true);
    assert.ok(writer);
    server.setGrantedPermissions(FOUR_PERMISSIONS);
    await assert.rejects(push(writer, VALID_PULL_SECRET), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'STORE_PERMISSION_DENIED');
      assert.match(err.message, /secretmanager\.secrets\.update/);
      assert.match(err.message, /SECRET_MANAGER_WRITE_INTENT=false/);
      return true;
    });
    assert.deepEqual(server.state.versionsOf(SECRET_ID), []);
  });

  test(
    'concurrent run-job processes with the same data: exactly one version',
    { timeout: 180_000 },
    async () => {
      const env = baseEnv({
        SECRET_STORE: 'gcp',
        GCP_PROJECT_ID: PROJECT,
        SECRET_MANAGER_ENDPOINT: server.address,
        SECRET_MANAGER_INSECURE: 'true',
        SECRET_MANAGER_WRITE_INTENT: 'true',
        CLUSTER_ID: CLUSTER,
        PULL_SECRET_DATA: VALID_PULL_SECRET,
      });
      const results = await Promise.all(
        Array.from({ length: 10 }, () => runCli(['run-job', 'pull-secret'], env)),
      );
      for (const r of results) assert.equal(r.code, 0, r.stderr);
      console.log(
        `versions after 10 concurrent jobs with the write intent: ${server.state.versionsOf(SECRET_ID).length}`,
      );
      assert.equal(server.state.versionsOf(SECRET_ID).length, 1);
      assert.equal(results.filter((r) => finalLine(r)?.outcome === 'created').length, 1);
    },
  );
});

describe('without the write intent (the four permissions only)', () => {
  test(`${WRITERS} clients pushing the same data at once, ${ROUNDS} rounds: what remains possible (measured)`, async () => {
    server.setGrantedPermissions(FOUR_PERMISSIONS);
    const writers = await clients(WRITERS, false);
    const counts: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      server.state.clear();
      await Promise.all(writers.map((w) => push(w, VALID_PULL_SECRET)));
      counts.push(server.state.versionsOf(SECRET_ID).length);
      assert.ok(
        versionData().every((d) => d === VALID_PULL_SECRET),
        'duplicates, if any, hold the same content',
      );
    }
    // Recorded for docs/architecture.md: writers that read before any of them added each add a version.
    console.log(`versions per round without the write intent: ${counts.join(' ')}`);
    assert.ok(counts.every((c) => c >= 1 && c <= WRITERS));
  });

  test(`${WRITERS} clients updating to the same data at once, ${ROUNDS} rounds: what remains possible (measured)`, async () => {
    server.setGrantedPermissions(FOUR_PERMISSIONS);
    const counts = await updateRounds(await clients(WRITERS, false));
    console.log(`new versions per update round without the write intent: ${counts.join(' ')}`);
    assert.ok(counts.every((c) => c >= 1 && c <= WRITERS));
  });
});
