// Retention over the real stores: the local store and the GCP Secret Manager test server (gRPC on
// loopback, the real SDK). A controllable clock walks grace → disable → destroy → keep-N; the
// no-op path is counted at the store edge; an unmanaged secret is never touched.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/observability/logger.js';
import { reconcilePullSecret } from '../../src/reconcile/reconcile-pull-secret.js';
import { RetentionMetrics } from '../../src/retention/metrics.js';
import { DEFAULT_RETENTION_POLICY, type RetentionPolicy } from '../../src/retention/plan.js';
import { RetentionRunner } from '../../src/retention/runner.js';
import { retentionStep } from '../../src/retention/step.js';
import { gcpStoreFactory } from '../../src/stores/gcp-secret-manager/index.js';
import { instrumented } from '../../src/stores/instrumented-store.js';
import { LocalStore } from '../../src/stores/local/index.js';
import type { SecretStore } from '../../src/stores/store.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import { conditionOf, startAdapterStack } from '../support/adapter-stack.js';
import { awsTestEnv, keyVaultStore } from '../support/store-harness.js';
import {
  startAwsSecretsManagerTestServer,
  TEST_CREDENTIALS,
  type AwsSecretsManagerTestServer,
} from '../servers/aws-secrets-manager/index.js';
import { awsStoreFactory } from '../../src/stores/aws-secrets-manager/index.js';
import { rollbackPullSecret } from '../../src/retention/rollback.js';
import { startKeyVaultTestServer } from '../servers/azure-key-vault/index.js';
import { CANARY_PULL_SECRET, findCanary, VALID_PULL_SECRET } from '../support/fixtures.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const RETRY = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 };

/** Pull secret number `n`: same registries, a different e-mail, so each is new content. */
const content = (n: number, base = VALID_PULL_SECRET) =>
  base.replace(/"email":"[a-z]+@example\.com"/, `"email":"ops${n}@example.com"`);

interface Backend {
  name: string;
  store: SecretStore;
  /** Seeds a secret behind the store's back (labels, versions oldest first). */
  seed(secretId: string, labels: Record<string, string>, data: string[]): Promise<void>;
  close(): Promise<void>;
}

async function localBackend(): Promise<Backend> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-retention-'));
  const store = new LocalStore({ dir });
  return {
    name: 'local',
    store,
    async seed(secretId, labels, data) {
      await store.createSecret(secretId, labels);
      for (const d of data) await store.addVersion(secretId, Buffer.from(d));
    },
    async close() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function gcpBackend(): Promise<Backend & { server: SecretManagerTestServer }> {
  process.env.METADATA_SERVER_DETECTION = 'none';
  const server = await startSecretManagerTestServer({ project: 'retention-project' });
  const store = await gcpStoreFactory.create({
    projectId: 'retention-project',
    endpoint: server.address,
    insecure: true,
    callTimeoutMs: 5000,
  });
  return {
    name: 'gcp',
    store,
    server,
    async seed(secretId, labels, data) {
      server.state.seedSecret(secretId, { labels, versions: data.map((d) => ({ data: d })) });
    },
    async close() {
      await store.close();
      await server.stop();
    },
  };
}

/** Captures every log line. */
function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, log: createLogger({ level: 'debug', destination: sink }) };
}

/** `pullsecret_retention_lag_seconds` of one store: one series per store, no cluster label. */
async function lagOf(registry: Registry, store: string): Promise<number> {
  const text = await registry.metrics();
  const found = new RegExp(`^pullsecret_retention_lag_seconds\\{store="${store}"\\} (\\S+)$`, 'm').exec(text);
  assert.ok(found, `a lag series for ${store}`);
  return Number(found[1]);
}

/** A store whose contract calls are counted by method. */
function counted(store: SecretStore) {
  const calls: Record<string, number> = {};
  const wrapped = instrumented(store, (method) => {
    calls[method] = (calls[method] ?? 0) + 1;
  });
  return { store: wrapped, calls, reset: () => Object.keys(calls).forEach((k) => delete calls[k]) };
}

for (const make of [localBackend, gcpBackend]) {
  describe(`retention on the ${make.name.replace('Backend', '')} store`, () => {
    let backend: Backend;
    before(async () => {
      backend = await make();
    });
    after(async () => backend.close());

    const states = async (secretId: string) =>
      (await backend.store.describe(secretId))?.versions.map((v) => `${v.version}:${v.state}`) ?? [];

    test('the version lifecycle contract: disable, enable, destroy (final, payload gone), clear errors', async () => {
      const secretId = 'hyperfleet-c-life-1-pull-secret';
      await backend.seed(secretId, { 'managed-by': 'hyperfleet' }, [content(1), content(2)]);
      const { store } = backend;
      const code = (c: string) => (e: unknown) => (e as { code?: string }).code === c;
      assert.equal((await store.disableVersion?.(secretId, '1'))?.state, 'DISABLED');
      assert.equal(
        (await store.disableVersion?.(secretId, '1'))?.state,
        'DISABLED',
        'disabling twice is a no-op',
      );
      await assert.rejects(store.accessVersion(secretId, '1'), code('VERSION_NOT_ENABLED'));
      assert.equal((await store.enableVersion?.(secretId, '1'))?.state, 'ENABLED');
      assert.equal((await store.accessVersion(secretId, '1')).data.toString(), content(1));
      const destroyed = await store.destroyVersion?.(secretId, '1');
      assert.deepEqual([destroyed?.version, destroyed?.state], ['1', 'DESTROYED']);
      await assert.rejects(store.accessVersion(secretId, '1'), code('VERSION_NOT_ENABLED'));
      await assert.rejects(
        store.enableVersion?.(secretId, '1') ?? Promise.reject(new Error('no enableVersion')),
        code('STORE_INVALID_REQUEST'),
      );
      await assert.rejects(
        store.destroyVersion?.(secretId, '1') ?? Promise.reject(new Error('no destroyVersion')),
        code('STORE_INVALID_REQUEST'),
      );
      await assert.rejects(
        store.disableVersion?.(secretId, '9') ?? Promise.reject(new Error('no disableVersion')),
        code('SECRET_NOT_FOUND'),
      );
      assert.deepEqual(await states(secretId), ['2:ENABLED', '1:DESTROYED']);
      assert.equal((await store.accessLatestEnabled(secretId))?.version, '2');
    });

    test('grace → disable → destroy → keep-N, listing only when something is due', async () => {
      let offset = 0;
      const clock = () => Date.now() + offset;
      const registry = new Registry();
      const metrics = new RetentionMetrics(registry, [backend.store.kind]);
      const policy: RetentionPolicy = { ...DEFAULT_RETENTION_POLICY, keepVersions: 3 };
      const runner = new RetentionRunner({ policy, retry: RETRY, clock, observer: metrics });
      const { store, calls, reset } = counted(backend.store);
      const { log, lines } = capture();
      const reconcile = (n: number, base?: string) =>
        reconcilePullSecret(
          { clusterId: 'c-ret-1', pullSecretData: content(n, base) },
          { store, retry: RETRY, log, steps: [retentionStep(runner)] },
        );
      const secretId = 'hyperfleet-c-ret-1-pull-secret';

      const first = await reconcile(1, CANARY_PULL_SECRET);
      assert.deepEqual(first.retention, { currentVersion: '1' });
      const second = await reconcile(2, CANARY_PULL_SECRET);
      assert.equal(second.retention?.currentVersion, '2');
      assert.equal(second.retention?.previous?.version, '1');
      assert.equal(second.retention?.previous?.state, 'ENABLED');
      const v2 = (await backend.store.describe(secretId))?.versions.find((v) => v.version === '2');
      assert.equal(
        second.retention?.previous?.graceEndsAt,
        new Date(Date.parse(v2?.createdTime ?? '') + 24 * HOUR).toISOString(),
      );

      // A no-op within the grace: one payload access, no listing, no lifecycle call.
      reset();
      const noop = await reconcile(2, CANARY_PULL_SECRET);
      assert.equal(noop.outcome, 'unchanged');
      assert.deepEqual(calls, { accessLatestEnabled: 1 });
      assert.equal(noop.retention?.previous?.version, '1');

      // The grace is over: the next reconcile lists once and disables version 1.
      offset = 25 * HOUR;
      reset();
      const graceOver = await reconcile(2, CANARY_PULL_SECRET);
      assert.deepEqual(calls, { accessLatestEnabled: 1, describe: 1, disableVersion: 1 });
      assert.deepEqual(await states(secretId), ['2:ENABLED', '1:DISABLED']);
      assert.equal(graceOver.retention?.previous?.state, 'DISABLED');

      // Idempotent: the same reconcile again (nothing due until the retention ends) and a fresh runner (a restart) change nothing.
      reset();
      await reconcile(2, CANARY_PULL_SECRET);
      assert.deepEqual(calls, { accessLatestEnabled: 1 });
      const restarted = new RetentionRunner({ policy, retry: RETRY, clock });
      reset();
      await reconcilePullSecret(
        { clusterId: 'c-ret-1', pullSecretData: content(2, CANARY_PULL_SECRET) },
        { store, retry: RETRY, log, steps: [retentionStep(restarted)] },
      );
      assert.deepEqual(calls, { accessLatestEnabled: 1, describe: 1 });
      assert.deepEqual(await states(secretId), ['2:ENABLED', '1:DISABLED']);

      // The retention is over: version 1 is destroyed (payload gone for good).
      offset = 25 * HOUR + 30 * DAY;
      await reconcile(2, CANARY_PULL_SECRET);
      assert.deepEqual(await states(secretId), ['2:ENABLED', '1:DESTROYED']);
      await assert.rejects(
        backend.store.accessVersion(secretId, '1'),
        (e: { code?: string }) => e.code === 'VERSION_NOT_ENABLED',
      );

      // Keep-N (3): four more versions within an hour; past their grace at most 3 remain. The stores
      // stamp versions with the real time, so the test clock starts over from it.
      offset = 0;
      for (const n of [3, 4, 5, 6]) await reconcile(n, CANARY_PULL_SECRET);
      assert.deepEqual(await states(secretId), [
        '6:ENABLED',
        '5:ENABLED',
        '4:ENABLED',
        '3:ENABLED',
        '2:ENABLED',
        '1:DESTROYED',
      ]);
      offset += 2 * DAY;
      const kept = await reconcile(6, CANARY_PULL_SECRET);
      assert.deepEqual(await states(secretId), [
        '6:ENABLED',
        '5:DISABLED',
        '4:DISABLED',
        '3:DESTROYED',
        '2:DESTROYED',
        '1:DESTROYED',
      ]);
      assert.equal(kept.retention?.previous?.version, '5');

      const text = await registry.metrics();
      assert.match(
        text,
        new RegExp(`pullsecret_versions_disabled_total\\{store="${backend.store.kind}"\\} 3`),
      );
      assert.match(
        text,
        new RegExp(`pullsecret_versions_destroyed_total\\{store="${backend.store.kind}"\\} 3`),
      );
      assert.match(
        text,
        new RegExp(`pullsecret_retention_failures_total\\{store="${backend.store.kind}"\\} 0`),
      );
      assert.match(text, /pullsecret_secret_versions_count\{store="[a-z]+"\} \d+/);
      // Leak canary: no credential byte in the logs or the metrics of the retention paths.
      assert.equal(findCanary(lines.join('')), undefined);
      assert.equal(findCanary(text), undefined);
      assert.equal(findCanary(JSON.stringify(kept.retention)), undefined);
    });

    test('an unmanaged secret is never touched, however old its versions', async () => {
      const secretId = 'hyperfleet-c-ret-2-pull-secret';
      await backend.seed(secretId, { owner: 'someone-else' }, [content(1), content(2)]);
      const runner = new RetentionRunner({
        policy: { ...DEFAULT_RETENTION_POLICY, keepVersions: 1 },
        retry: RETRY,
        clock: () => Date.now() + 400 * DAY,
      });
      const { log } = capture();
      // The no-op push does not read labels; retention does, and leaves the secret alone.
      const result = await reconcilePullSecret(
        { clusterId: 'c-ret-2', pullSecretData: content(2) },
        { store: backend.store, retry: RETRY, log, steps: [retentionStep(runner)] },
      );
      assert.equal(result.outcome, 'unchanged');
      assert.deepEqual(result.retention, { currentVersion: '2' });
      assert.deepEqual(await states(secretId), ['2:ENABLED', '1:ENABLED']);
      // Another cluster's secret neither.
      const other = 'hyperfleet-c-ret-3-pull-secret';
      await backend.seed(other, { 'managed-by': 'hyperfleet', 'cluster-id': 'c-ret-9' }, [
        content(1),
        content(2),
      ]);
      await reconcilePullSecret(
        { clusterId: 'c-ret-3', pullSecretData: content(2) },
        { store: backend.store, retry: RETRY, log, steps: [retentionStep(runner)] },
      );
      assert.deepEqual(await states(other), ['2:ENABLED', '1:ENABLED']);
    });

    test('a failing pass never fails the reconcile; it is counted and retried later', async () => {
      const registry = new Registry();
      const metrics = new RetentionMetrics(registry, [backend.store.kind]);
      let offset = 0;
      const runner = new RetentionRunner({
        policy: DEFAULT_RETENTION_POLICY,
        retry: RETRY,
        clock: () => Date.now() + offset,
        observer: metrics,
        failureBackoffMs: HOUR,
      });
      const { log } = capture();
      const failing = () => Promise.reject(Object.assign(new Error('boom'), { code: 'STORE_FAILED' }));
      const broken = new Proxy(backend.store, {
        get: (target, key) => {
          if (key === 'describe') return failing;
          const value: unknown = Reflect.get(target, key);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const base = { retry: RETRY, log, steps: [retentionStep(runner)] };
      await reconcilePullSecret(
        { clusterId: 'c-ret-4', pullSecretData: content(1) },
        { ...base, store: backend.store },
      );
      offset = 2 * DAY;
      const result = await reconcilePullSecret(
        { clusterId: 'c-ret-4', pullSecretData: content(2) },
        { ...base, store: broken },
      );
      assert.equal(result.outcome, 'updated');
      assert.deepEqual(result.retention, { currentVersion: '2' });
      assert.match(await registry.metrics(), /pullsecret_retention_failures_total\{store="[a-z]+"\} 1/);
    });

    test('retention lag: the oldest version past its retire time and not retired, per store, until it is', async () => {
      // A fixed clock (no real time in it): the expected lag is computed from the stored create times.
      const base = Date.now();
      let offset = 0;
      const clock = () => base + offset;
      const kind = backend.store.kind;
      const registry = new Registry();
      const runner = new RetentionRunner({
        policy: DEFAULT_RETENTION_POLICY,
        retry: RETRY,
        clock,
        observer: new RetentionMetrics(registry, [kind]),
        failureBackoffMs: HOUR,
      });
      const lag = () => lagOf(registry, kind);
      let failDisable = false;
      const failing = () => Promise.reject(Object.assign(new Error('refused'), { code: 'STORE_FAILED' }));
      const flaky = new Proxy(backend.store, {
        get: (target, key) => {
          if (key === 'disableVersion' && failDisable) return failing;
          const value: unknown = Reflect.get(target, key);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const { log } = capture();
      const reconcile = (cluster: string, n: number) =>
        reconcilePullSecret(
          { clusterId: cluster, pullSecretData: content(n) },
          { store: flaky, retry: RETRY, log, steps: [retentionStep(runner)] },
        );
      /** When version 1's grace ends: version 2's create time plus the grace. */
      const graceEnd = async (cluster: string) => {
        const listed = await backend.store.describe(`hyperfleet-${cluster}-pull-secret`);
        const v2 = listed?.versions.find((v) => v.version === '2');
        return Date.parse(v2?.createdTime ?? '') + DEFAULT_RETENTION_POLICY.graceHours * HOUR;
      };
      const seconds = (since: number) => (clock() - since) / 1000;

      for (const cluster of ['c-lag-1', 'c-lag-2']) {
        await reconcile(cluster, 1);
        await reconcile(cluster, 2);
      }
      assert.equal(await lag(), 0, 'within the grace nothing is late');
      assert.match(await registry.metrics(), /^pullsecret_retention_grace_seconds 86400$/m);
      const [end1, end2] = [await graceEnd('c-lag-1'), await graceEnd('c-lag-2')];

      // Not reconciled since the graces ended: the runner knows the due times; the oldest shows.
      offset = 26 * HOUR;
      assert.equal(await lag(), seconds(Math.min(end1, end2)));

      // A reconcile whose disable fails: still late, and growing while the failures go on.
      failDisable = true;
      await reconcile('c-lag-1', 2);
      await reconcile('c-lag-2', 2);
      assert.deepEqual(await states('hyperfleet-c-lag-1-pull-secret'), ['2:ENABLED', '1:ENABLED']);
      assert.equal(await lag(), seconds(Math.min(end1, end2)));
      offset = 28 * HOUR;
      await reconcile('c-lag-1', 2);
      assert.equal(await lag(), seconds(Math.min(end1, end2)));
      assert.match(await registry.metrics(), /pullsecret_retention_failures_total\{store="[a-z]+"\} 3/);

      // Past the failure backoff, the first secret is retired: the other one is the oldest left; then 0.
      failDisable = false;
      offset = 30 * HOUR;
      await reconcile('c-lag-1', 2);
      assert.deepEqual(await states('hyperfleet-c-lag-1-pull-secret'), ['2:ENABLED', '1:DISABLED']);
      assert.equal(await lag(), seconds(end2));
      await reconcile('c-lag-2', 2);
      assert.deepEqual(await states('hyperfleet-c-lag-2-pull-secret'), ['2:ENABLED', '1:DISABLED']);
      assert.equal(await lag(), 0);

      // A deleted cluster is forgotten: its due times no longer count.
      offset = 31 * DAY;
      assert.equal(await lag(), seconds(Math.min(end1, end2) - 24 * HOUR + 30 * DAY));
      runner.forget(backend.store, 'hyperfleet-c-lag-1-pull-secret');
      runner.forget(backend.store, 'hyperfleet-c-lag-2-pull-secret');
      assert.equal(await lag(), 0);
    });
  });
}

describe('retention in the adapter (in-process, local store)', () => {
  test('without a runner (retention off, Job mode) the lag is 0 for every store, and so is the grace', async () => {
    const registry = new Registry();
    new RetentionMetrics(registry, ['gcp', 'local']);
    const text = await registry.metrics();
    assert.match(text, /^pullsecret_retention_lag_seconds\{store="gcp"\} 0$/m);
    assert.match(text, /^pullsecret_retention_lag_seconds\{store="local"\} 0$/m);
    assert.match(text, /^pullsecret_retention_grace_seconds 0$/m);
  });

  test('content A, B, C: the status shows the current version, the previous one and the end of its grace; metrics and logs hold no credential', async () => {
    const stack = await startAdapterStack({ retention: { enabled: true } });
    try {
      const cluster = await stack.seedCluster({ pullSecret: { data: content(1, CANARY_PULL_SECRET) } });
      await stack.publish(cluster);
      const first = await stack.waitForStatus(cluster.id, (s) => s.data?.currentVersion === '1');
      assert.equal(first.data?.previousVersion, undefined);
      let generation = 1;
      for (const n of [2, 3]) {
        const patched = await stack.request('PATCH', `/clusters/${cluster.id}`, {
          spec: { ...cluster.spec, pullSecret: { data: content(n, CANARY_PULL_SECRET) } },
        });
        assert.equal(patched.status, 200);
        generation += 1;
        await stack.publish({ id: cluster.id, generation });
        await stack.waitForStatus(cluster.id, (s) => s.observed_generation === generation);
      }
      const status = await stack.waitForStatus(cluster.id, (s) => s.data?.currentVersion === '3');
      assert.equal(conditionOf(status, 'Applied'), 'True/SecretUpdated');
      assert.equal(status.data?.previousVersion, '2');
      assert.equal(status.data?.previousVersionState, 'ENABLED');
      const store = new LocalStore({ dir: join(stack.dir, 'store') });
      const v3 = (await store.describe(`hyperfleet-${cluster.id}-pull-secret`))?.versions.find(
        (v) => v.version === '3',
      );
      await store.close();
      assert.equal(
        status.data?.previousGraceEndsAt,
        new Date(Date.parse(v3?.createdTime ?? '') + 24 * HOUR).toISOString(),
      );
      const metrics = await stack.adapter.metrics.registry.metrics();
      assert.match(metrics, /pullsecret_secret_versions_count\{store="local"\} [1-9]/);
      // The adapter's runner feeds the lag gauges: nothing late within the grace, the grace for the alert.
      assert.match(metrics, /^pullsecret_retention_lag_seconds\{store="local"\} 0$/m);
      assert.match(metrics, /^pullsecret_retention_grace_seconds 86400$/m);
      assert.equal(findCanary(JSON.stringify(status)), undefined);
      assert.equal(findCanary(metrics), undefined);
      assert.equal(findCanary(stack.logs.join('\n')), undefined);
    } finally {
      await stack.stop();
    }
  });
});

describe('retention on the Azure Key Vault store (disable only: Key Vault has no per-version destroy)', () => {
  test('the previous version is disabled after its grace and stays disabled (not destroyed) after the retention', async () => {
    const server = await startKeyVaultTestServer();
    const store = await keyVaultStore(server);
    try {
      let offset = 0;
      const registry = new Registry();
      const runner = new RetentionRunner({
        policy: DEFAULT_RETENTION_POLICY,
        retry: RETRY,
        clock: () => Date.now() + offset,
        observer: new RetentionMetrics(registry, ['azure']),
      });
      const { log } = capture();
      const reconcile = (n: number) =>
        reconcilePullSecret(
          { clusterId: 'c-ret-az', pullSecretData: content(n) },
          { store, retry: RETRY, log, steps: [retentionStep(runner)] },
        );
      const first = await reconcile(1);
      const second = await reconcile(2);
      assert.equal(second.retention?.previous?.version, first.version);
      const secretId = 'hyperfleet-c-ret-az-pull-secret';
      const stateOf = async () =>
        (await store.describe(secretId))?.versions.map((v) =>
          v.version === first.version ? `first:${v.state}` : `second:${v.state}`,
        );
      offset = 25 * HOUR;
      await reconcile(2);
      assert.deepEqual(await stateOf(), ['second:ENABLED', 'first:DISABLED']);
      offset = 31 * DAY;
      await reconcile(2);
      assert.deepEqual(await stateOf(), ['second:ENABLED', 'first:DISABLED']);
      const text = await registry.metrics();
      assert.match(text, /pullsecret_versions_disabled_total\{store="azure"\} 1/);
      assert.match(text, /pullsecret_retention_failures_total\{store="azure"\} 0/);
    } finally {
      await store.close();
      await server.stop();
    }
  });
});

describe('retention on the AWS Secrets Manager store (AWSPREVIOUS is the overlap; AWS removes deprecated versions itself)', () => {
  let server: AwsSecretsManagerTestServer;
  let store: SecretStore;
  before(async () => {
    Object.assign(process.env, awsTestEnv());
    server = await startAwsSecretsManagerTestServer();
    store = await awsStoreFactory.create({
      accountId: TEST_CREDENTIALS.accountId,
      region: server.region,
      endpoint: server.endpoint,
      callTimeoutMs: 5000,
    });
  });
  after(async () => {
    await store.close();
    await server.stop();
  });
  const code = (c: string) => (e: unknown) => (e as { code?: string }).code === c;
  const stageCalls = () => server.calls.UpdateSecretVersionStage;
  /** Test-server calls since the last `resetCalls`, by operation (only those made). */
  const wire = () => Object.fromEntries(Object.entries(server.calls).filter(([, n]) => n > 0));
  /** Version states by name (`names` maps version ids to v1, v2, ...), in `describe`'s order. */
  const statesOf = async (secretId: string, names: Map<string, string>) =>
    (await store.describe(secretId))?.versions
      .map((v) => `${names.get(v.version) ?? v.version}:${v.state}`)
      .sort() ?? [];

  test('the lifecycle: disable removes AWSPREVIOUS (one write, idempotent), AWSCURRENT is refused, enable gives it back, foreign labels stay', async () => {
    const secretId = 'hyperfleet-c-life-aws-pull-secret';
    await store.createSecret(secretId, { 'managed-by': 'hyperfleet', 'cluster-id': 'c-life-aws' });
    const v1 = (await store.addVersion(secretId, Buffer.from(content(1)), { ifLatest: null })).version;
    const v2 = (await store.addVersion(secretId, Buffer.from(content(2)), { ifLatest: v1 })).version;
    assert.equal('destroyVersion' in store, false, 'AWS has no per-version delete');
    await assert.rejects(
      store.disableVersion?.(secretId, v2) ?? Promise.reject(new Error('no disableVersion')),
      code('STORE_INVALID_REQUEST'),
    );
    assert.equal(
      (await store.accessVersion(secretId, v1)).data.toString(),
      content(1),
      'AWSPREVIOUS is served',
    );

    let before = stageCalls();
    assert.equal((await store.disableVersion?.(secretId, v1))?.state, 'DISABLED');
    assert.equal(stageCalls() - before, 1);
    before = stageCalls();
    assert.equal(
      (await store.disableVersion?.(secretId, v1))?.state,
      'DISABLED',
      'disabling twice is a no-op',
    );
    assert.equal(stageCalls() - before, 0, 'no write for a version without staging labels');
    await assert.rejects(store.accessVersion(secretId, v1), code('VERSION_NOT_ENABLED'));

    assert.equal((await store.enableVersion?.(secretId, v1))?.state, 'ENABLED');
    assert.equal((await store.accessVersion(secretId, v1)).data.toString(), content(1));
    assert.deepEqual(
      server.state.describeSecret(TEST_CREDENTIALS.accountId, { SecretId: secretId }).VersionIdsToStages,
      { [v1]: ['AWSPREVIOUS'], [v2]: ['AWSCURRENT'] },
    );

    // A label someone else put there is not ours: AWSPREVIOUS goes, the custom label stays and so does the service of the version.
    server.state.updateSecretVersionStage(TEST_CREDENTIALS.accountId, {
      SecretId: secretId,
      VersionStage: 'BLUE',
      MoveToVersionId: v1,
    });
    assert.equal((await store.disableVersion?.(secretId, v1))?.state, 'ENABLED');
    assert.deepEqual(
      server.state.describeSecret(TEST_CREDENTIALS.accountId, { SecretId: secretId }).VersionIdsToStages,
      { [v1]: ['BLUE'], [v2]: ['AWSCURRENT'] },
    );
    assert.equal((await store.accessVersion(secretId, v1)).data.toString(), content(1));

    await assert.rejects(
      store.disableVersion?.(secretId, '00000000-0000-4000-8000-000000000000') ??
        Promise.reject(new Error('no disableVersion')),
      code('SECRET_NOT_FOUND'),
    );
    await assert.rejects(
      store.enableVersion?.('hyperfleet-c-none-pull-secret', v1) ??
        Promise.reject(new Error('no enableVersion')),
      code('SECRET_NOT_FOUND'),
    );
  });

  test('a push that moves AWSPREVIOUS while the disable is on the wire: the refused stage move is read again, not an error', async () => {
    const secretId = 'hyperfleet-c-race-aws-pull-secret';
    await store.createSecret(secretId, { 'managed-by': 'hyperfleet', 'cluster-id': 'c-race-aws' });
    const v1 = (await store.addVersion(secretId, Buffer.from(content(1)), { ifLatest: null })).version;
    const v2 = (await store.addVersion(secretId, Buffer.from(content(2)), { ifLatest: v1 })).version;
    // The disable's UpdateSecretVersionStage waits on the server; meanwhile another writer makes v3 current (AWS moves AWSPREVIOUS to v2).
    server.injectFault({ operation: 'UpdateSecretVersionStage', delayMs: 300 });
    const stagesBefore = stageCalls();
    const disabling = store.disableVersion?.(secretId, v1);
    while (stageCalls() === stagesBefore) await new Promise((resolve) => setTimeout(resolve, 5));
    server.state.putSecretValue(TEST_CREDENTIALS.accountId, {
      SecretId: secretId,
      ClientRequestToken: '00000000-0000-4000-8000-0000000000c3',
      SecretString: content(3),
      VersionStages: ['AWSCURRENT'],
    });
    assert.equal((await disabling)?.state, 'DISABLED');
    assert.equal(
      server.callLog.filter((c) => c.operation === 'UpdateSecretVersionStage').at(-1)?.code,
      'InvalidParameterException',
      'AWS refused the stale move',
    );
    const stagesNow = server.state.describeSecret(TEST_CREDENTIALS.accountId, { SecretId: secretId })
      .VersionIdsToStages as Record<string, string[]>;
    assert.equal(stagesNow[v1], undefined, 'v1 is deprecated');
    assert.deepEqual(
      stagesNow[v2],
      ['AWSPREVIOUS'],
      "the concurrent writer's AWSPREVIOUS is left where AWS put it",
    );
  });

  test('grace (AWSPREVIOUS) → disable (AWSPREVIOUS removed) → nothing more after the retention; keep-N leaves versions deprecated; rollback from a retired version', async () => {
    let offset = 0;
    const registry = new Registry();
    const runner = new RetentionRunner({
      policy: { ...DEFAULT_RETENTION_POLICY, keepVersions: 3 },
      retry: RETRY,
      clock: () => Date.now() + offset,
      observer: new RetentionMetrics(registry, ['aws']),
    });
    const { store: countedStore, calls, reset } = counted(store);
    const { log, lines } = capture();
    const reconcile = (n: number) =>
      reconcilePullSecret(
        { clusterId: 'c-ret-aws', pullSecretData: content(n, CANARY_PULL_SECRET) },
        { store: countedStore, retry: RETRY, log, steps: [retentionStep(runner)] },
      );
    const secretId = 'hyperfleet-c-ret-aws-pull-secret';
    const names = new Map<string, string>();
    const write = async (n: number) => {
      const result = await reconcile(n);
      names.set(result.version ?? '', `v${n}`);
      return result;
    };

    const first = await write(1);
    server.resetCalls();
    const second = await write(2);
    // An update with retention on: the push (GetSecretValue, DescribeSecret, PutSecretValue, UpdateSecretVersionStage twice (AWSCURRENT moved, AWSPENDING removed), GetSecretValue back) + the listing.
    assert.deepEqual(wire(), {
      GetSecretValue: 2,
      DescribeSecret: 2,
      PutSecretValue: 1,
      UpdateSecretVersionStage: 2,
      ListSecretVersionIds: 1,
    });
    assert.equal(second.retention?.previous?.version, first.version);
    assert.equal(second.retention?.previous?.state, 'ENABLED');
    assert.deepEqual(await statesOf(secretId, names), ['v1:ENABLED', 'v2:ENABLED']);
    assert.equal(
      (await store.accessVersion(secretId, first.version ?? '')).data.toString(),
      content(1, CANARY_PULL_SECRET),
      'both credentials serve during the grace',
    );

    // A no-op within the grace: one payload access, no listing, no stage change.
    reset();
    let stages = stageCalls();
    assert.equal((await reconcile(2)).outcome, 'unchanged');
    assert.deepEqual(calls, { accessLatestEnabled: 1 });
    assert.equal(stageCalls() - stages, 0);

    // The grace is over: AWSPREVIOUS is removed from version 1 (one UpdateSecretVersionStage); its reads are refused.
    offset = 25 * HOUR;
    reset();
    server.resetCalls();
    stages = stageCalls();
    const graceOver = await reconcile(2);
    assert.deepEqual(calls, { accessLatestEnabled: 1, describe: 1, disableVersion: 1 });
    assert.equal(stageCalls() - stages, 1);
    // On the wire: the no-op's GetSecretValue, the listing (DescribeSecret + ListSecretVersionIds), the disable (ListSecretVersionIds + UpdateSecretVersionStage).
    assert.deepEqual(wire(), {
      GetSecretValue: 1,
      DescribeSecret: 1,
      ListSecretVersionIds: 2,
      UpdateSecretVersionStage: 1,
    });
    assert.equal(graceOver.retention?.previous?.state, 'DISABLED');
    assert.deepEqual(await statesOf(secretId, names), ['v1:DISABLED', 'v2:ENABLED']);
    await assert.rejects(store.accessVersion(secretId, first.version ?? ''), code('VERSION_NOT_ENABLED'));

    // The retention is over: nothing more happens (no destroy on AWS); version 1 stays listed, deprecated.
    offset = 31 * DAY;
    assert.equal(await lagOf(registry, 'aws'), 0, 'a retention end retires nothing on AWS: not late');
    stages = stageCalls();
    await reconcile(2);
    assert.equal(stageCalls() - stages, 0);
    assert.deepEqual(await statesOf(secretId, names), ['v1:DISABLED', 'v2:ENABLED']);

    // Keep-N (3): four more versions within the hour. AWS itself takes AWSPREVIOUS from each
    // version the next-but-one write supersedes, so only the newest previous one overlaps.
    offset = 0;
    for (const n of [3, 4, 5, 6]) await write(n);
    assert.deepEqual(await statesOf(secretId, names), [
      'v1:DISABLED',
      'v2:DISABLED',
      'v3:DISABLED',
      'v4:DISABLED',
      'v5:ENABLED',
      'v6:ENABLED',
    ]);
    offset = 2 * DAY;
    stages = stageCalls();
    const kept = await reconcile(6);
    assert.equal(stageCalls() - stages, 1, 'only v5 still had AWSPREVIOUS');
    assert.deepEqual(await statesOf(secretId, names), [
      'v1:DISABLED',
      'v2:DISABLED',
      'v3:DISABLED',
      'v4:DISABLED',
      'v5:DISABLED',
      'v6:ENABLED',
    ]);
    assert.equal(kept.retention?.previous?.state, 'DISABLED');

    // Rollback to the retired version 1: enabled for the read (AWSPREVIOUS), disabled again, its content pushed as a new version.
    const rolled = await rollbackPullSecret(
      { clusterId: 'c-ret-aws', toVersion: first.version ?? '' },
      { store, retry: RETRY, log },
    );
    assert.equal(rolled.push.outcome, 'updated');
    assert.equal(
      (await store.accessLatestEnabled(secretId))?.data.toString(),
      content(1, CANARY_PULL_SECRET),
    );
    assert.equal(
      (await store.describe(secretId))?.versions.find((v) => v.version === first.version)?.state,
      'DISABLED',
    );

    const text = await registry.metrics();
    assert.match(text, /pullsecret_versions_disabled_total\{store="aws"\} 2/);
    assert.match(text, /pullsecret_versions_destroyed_total\{store="aws"\} 0/);
    assert.match(text, /pullsecret_retention_failures_total\{store="aws"\} 0/);
    // Leak canary: no credential byte in the logs, the metrics or the retention view.
    assert.equal(findCanary(lines.join('')), undefined);
    assert.equal(findCanary(text), undefined);
    assert.equal(findCanary(JSON.stringify(kept.retention)), undefined);
  });
});

describe('retention on GCP with delayed destruction (store.settings.versionDestroyTtl)', () => {
  test('new secrets carry version_destroy_ttl; a destroyed version is DISABLED and scheduled, reported DESTROYED, never destroyed twice', async () => {
    process.env.METADATA_SERVER_DETECTION = 'none';
    const server = await startSecretManagerTestServer({ project: 'ttl-project' });
    const settings = {
      projectId: 'ttl-project',
      endpoint: server.address,
      insecure: true,
      callTimeoutMs: 5000,
    };
    const store = await gcpStoreFactory.create({ ...settings, versionDestroyTtl: 7 * 86_400 });
    try {
      // The setting is checked up front: the service wants at least 24 hours.
      await assert.rejects(
        gcpStoreFactory.create({ ...settings, versionDestroyTtl: '12h' as unknown as number }),
        (e: { code?: string; message?: string }) => {
          return e.code === 'CONFIG_INVALID' && /24 hours to 1000 days/.test(e.message ?? '');
        },
      );

      let offset = 0;
      const registry = new Registry();
      const policy = DEFAULT_RETENTION_POLICY;
      const runner = new RetentionRunner({
        policy,
        retry: RETRY,
        clock: () => Date.now() + offset,
        observer: new RetentionMetrics(registry, ['gcp']),
      });
      const { log } = capture();
      const reconcile = (n: number, retention = runner) =>
        reconcilePullSecret(
          { clusterId: 'c-ret-ttl', pullSecretData: content(n) },
          { store, retry: RETRY, log, steps: [retentionStep(retention)] },
        );
      const secretId = 'hyperfleet-c-ret-ttl-pull-secret';
      const stored = () =>
        server.state.getSecret({
          project: 'ttl-project',
          secretId,
          name: `projects/ttl-project/secrets/${secretId}`,
        });
      await reconcile(1);
      await reconcile(2);
      assert.equal(stored().versionDestroyTtlSeconds, 7 * 86_400);

      offset = 25 * HOUR;
      await reconcile(2);
      offset = 31 * DAY;
      const destroyedBefore = server.calls.DestroySecretVersion;
      await reconcile(2);
      assert.equal(server.calls.DestroySecretVersion - destroyedBefore, 1);
      const v1 = stored().versions[0];
      assert.equal(v1?.state, 'DISABLED', 'the service keeps it DISABLED until the TTL passes');
      assert.ok(
        v1?.scheduledDestroyTime !== undefined && v1.scheduledDestroyTime.getTime() > Date.now() + 6 * DAY,
      );
      assert.equal(
        v1?.data?.toString(),
        content(1),
        'the payload is kept (restorable by an admin) until then',
      );
      assert.deepEqual(
        (await store.describe(secretId))?.versions.map((v) => `${v.version}:${v.state}`),
        ['2:ENABLED', '1:DESTROYED'],
      );
      await assert.rejects(
        store.accessVersion(secretId, '1'),
        (e: { code?: string }) => e.code === 'VERSION_NOT_ENABLED',
      );

      // A restart lists again: the scheduled version is final for retention, no second DestroySecretVersion.
      await reconcile(2, new RetentionRunner({ policy, retry: RETRY, clock: () => Date.now() + offset }));
      assert.equal(server.calls.DestroySecretVersion - destroyedBefore, 1);
      assert.match(await registry.metrics(), /pullsecret_versions_destroyed_total\{store="gcp"\} 1/);
    } finally {
      await store.close();
      await server.stop();
    }
  });
});
