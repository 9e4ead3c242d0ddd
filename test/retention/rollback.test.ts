// Rollback: an earlier version's content made current again as a new version, over the local
// store and the GCP test server (library), and end to end through `pull-secret rollback` with the
// Kubernetes API test server (the Kubernetes Secret updated), refused when the version is destroyed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { PullSecretError } from '../../src/errors/index.js';
import { DOCKERCONFIGJSON_KEY } from '../../src/kube/pull-secret-manifest.js';
import { createLogger } from '../../src/observability/logger.js';
import { defaultSecretId, managedLabels } from '../../src/pullsecret/identifiers.js';
import { reconcilePullSecret } from '../../src/reconcile/reconcile-pull-secret.js';
import { rollbackPullSecret } from '../../src/retention/rollback.js';
import { gcpStoreFactory } from '../../src/stores/gcp-secret-manager/index.js';
import { LocalStore } from '../../src/stores/local/index.js';
import { storeConfigSchema, storeFactory } from '../../src/stores/registry.js';
import type { SecretStore } from '../../src/stores/store.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';
import { baseEnv, runCli } from '../support/cli.js';
import { CANARY_PULL_SECRET, findCanary } from '../support/fixtures.js';

const RETRY = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 };
/** Pull secret number `n` (the canary's credentials, a different e-mail). */
const content = (n: number) =>
  CANARY_PULL_SECRET.replace(/"email":"canary@example\.com"/, `"email":"ops${n}@example.com"`);

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

const backends: Array<{ name: string; open(): Promise<{ store: SecretStore; close(): Promise<void> }> }> = [
  {
    name: 'local',
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'ps-rollback-'));
      const store = new LocalStore({ dir });
      return {
        store,
        close: async () => {
          await store.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'gcp',
    async open() {
      process.env.METADATA_SERVER_DETECTION = 'none';
      const server: SecretManagerTestServer = await startSecretManagerTestServer({
        project: 'rollback-project',
      });
      const store = await gcpStoreFactory.create({
        projectId: 'rollback-project',
        endpoint: server.address,
        insecure: true,
        callTimeoutMs: 5000,
      });
      return {
        store,
        close: async () => {
          await store.close();
          await server.stop();
        },
      };
    },
  },
];

for (const backend of backends) {
  describe(`rollback on the ${backend.name} store`, () => {
    let store: SecretStore;
    let close: () => Promise<void>;
    const { log, lines } = capture();
    const clusterId = 'c-rollback-1';
    const secretId = defaultSecretId(clusterId);
    const payload = async (v: string) => (await store.accessVersion(secretId, v)).data.toString();
    const states = async () =>
      (await store.describe(secretId))?.versions.map((v) => `${v.version}:${v.state}`);

    before(async () => {
      const opened = await backend.open();
      store = opened.store;
      close = () => opened.close();
      for (const n of [1, 2, 3])
        await reconcilePullSecret({ clusterId, pullSecretData: content(n) }, { store, retry: RETRY, log });
    });
    after(() => close());

    it('to the previous version by default: its content as a new version, history kept', async () => {
      const result = await rollbackPullSecret({ clusterId }, { store, retry: RETRY, log });
      assert.deepEqual(
        [result.fromVersion, result.sourceVersion, result.push.version, result.push.outcome],
        ['3', '2', '4', 'updated'],
      );
      assert.equal(await payload('4'), content(2));
      assert.deepEqual(await states(), ['4:ENABLED', '3:ENABLED', '2:ENABLED', '1:ENABLED']);
    });

    it('to a given version, also a disabled one (enabled for the read, disabled again)', async () => {
      await store.disableVersion?.(secretId, '1');
      const result = await rollbackPullSecret({ clusterId, toVersion: '1' }, { store, retry: RETRY, log });
      assert.deepEqual([result.sourceVersion, result.push.version], ['1', '5']);
      assert.equal(await payload('5'), content(1));
      assert.deepEqual(await states(), ['5:ENABLED', '4:ENABLED', '3:ENABLED', '2:ENABLED', '1:DISABLED']);
    });

    it('refused with VERSION_DESTROYED when that version is destroyed; nothing written', async () => {
      await store.destroyVersion?.(secretId, '2');
      for (const request of [{ clusterId, toVersion: '2' }]) {
        await assert.rejects(
          rollbackPullSecret(request, { store, retry: RETRY, log }),
          (e: unknown) =>
            e instanceof PullSecretError &&
            e.code === 'VERSION_DESTROYED' &&
            /version 2 of .* is destroyed/.test(e.message),
        );
      }
      assert.equal((await states())?.length, 5);
    });

    it('refused for an unknown version, and for a secret another cluster owns', async () => {
      await assert.rejects(
        rollbackPullSecret({ clusterId, toVersion: '99' }, { store, retry: RETRY, log }),
        (e: unknown) => e instanceof PullSecretError && e.code === 'SECRET_NOT_FOUND',
      );
      await assert.rejects(
        rollbackPullSecret({ clusterId: 'c-rollback-2', secretName: secretId }, { store, retry: RETRY, log }),
        (e: unknown) => e instanceof PullSecretError && e.code === 'SECRET_UNMANAGED',
      );
      assert.equal(findCanary(lines.join('')), undefined, 'no credential in the logs');
    });
  });
}

describe('pull-secret rollback (CLI) with the Kubernetes API test server', () => {
  const CLUSTER = '019466a0-3333-7000-8000-000000000003';
  let dir: string;
  let kube: KubernetesTestServer;
  let config: string;
  const secretId = defaultSecretId(CLUSTER);
  const namespace = `clusters-${CLUSTER}`;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-rollback-cli-'));
    kube = await startKubernetesTestServer({ namespaces: [namespace, 'hyperfleet-system'] });
    const settings = { dir: join(dir, 'store') };
    const store = await storeFactory('local').create(storeConfigSchema('local').parse(settings));
    await store.createSecret(secretId, managedLabels(CLUSTER));
    for (const n of [1, 2, 3]) await store.addVersion(secretId, Buffer.from(content(n)));
    await store.destroyVersion?.(secretId, '1');
    await store.close();
    config = join(dir, 'config.yaml');
    await writeFile(
      config,
      JSON.stringify({
        store: { type: 'local', settings },
        kubernetes: { target: 'api', kubeconfig: kube.kubeconfigPath },
        execution: { retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 20 } },
      }),
    );
  });
  after(async () => {
    await kube.close();
    await rm(dir, { recursive: true, force: true });
  });

  const run = (...extra: string[]) =>
    runCli(['rollback', '--cluster-id', CLUSTER, '--config', config, ...extra], baseEnv());

  it('rolls back to the previous version and writes the Kubernetes Secret from it', async () => {
    const out = await run();
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(out.logs[0], {
      cluster_id: CLUSTER,
      secret_path: `local:secrets/${secretId}`,
      from_version: '3',
      restored_version: '2',
      version: '4',
      outcome: 'updated',
      pinned: true,
      kubernetes: { namespace, name: `${CLUSTER}-pull-secret`, outcome: 'created' },
    });
    const secret = kube.getObject('secrets', namespace, `${CLUSTER}-pull-secret`) as
      { data?: Record<string, string> } | undefined;
    assert.equal(Buffer.from(secret?.data?.[DOCKERCONFIGJSON_KEY] ?? '', 'base64').toString(), content(2));
    assert.equal(findCanary(out.stdout + out.stderr), undefined);
  });

  it('pins the restored content in a ConfigMap in the adapter namespace (no credential); --release ends it', async () => {
    const name = `pull-secret-pin-${CLUSTER}`;
    const pin = kube.getObject('configmaps', 'hyperfleet-system', name) as unknown as
      { data: Record<string, string> } | undefined;
    assert.deepEqual(
      [pin?.data.sourceVersion, pin?.data.version, pin?.data.specSha256],
      ['2', '4', undefined],
      'the CLI does not read the spec: the first reconcile adopts its digest',
    );
    assert.match(pin?.data.by ?? '', /^cli \(.+\)$/);
    assert.equal(findCanary(JSON.stringify(pin)), undefined);
    const bad = await run('--release', '--reason', 'x');
    assert.equal(bad.code, 2, bad.stderr);
    const soon = await run('--expires-in', 'soon');
    assert.equal(soon.code, 2, soon.stderr);
    assert.match(soon.stderr, /--expires-in must be a duration/);
    const released = await run('--release');
    assert.equal(released.code, 0, released.stderr);
    assert.deepEqual(released.logs[0], { cluster_id: CLUSTER, released: true });
    assert.equal(kube.getObject('configmaps', 'hyperfleet-system', name), undefined);
  });

  it('inspect shows the current and previous versions and the end of the grace', async () => {
    const out = await runCli(
      ['inspect', '--cluster-id', CLUSTER, '--grace-hours', '2'],
      baseEnv({ LOCAL_STORE_DIR: join(dir, 'store') }),
    );
    assert.equal(out.code, 0, out.stderr);
    const view = JSON.parse(out.stdout) as Record<string, unknown>;
    const versions = view.versions as Array<{ version: string; created_time: string }>;
    assert.deepEqual(
      [view.current_version, view.previous_version, view.previous_version_state],
      ['4', '3', 'ENABLED'],
    );
    const v4 = versions.find((v) => v.version === '4')?.created_time ?? '';
    assert.equal(view.previous_grace_ends_at, new Date(Date.parse(v4) + 2 * 3_600_000).toISOString());
    assert.equal(findCanary(out.stdout), undefined);
  });

  it('exit 1 with VERSION_DESTROYED explained for a destroyed version; exit 2 for a bad flag', async () => {
    const destroyed = await run('--to-version', '1');
    assert.equal(destroyed.code, 1);
    assert.match(
      destroyed.stderr,
      /^pull-secret: version 1 of local:secrets\/\S+ is destroyed, its content is gone; roll back to another version with --to-version$/m,
    );
    const bad = await run('--to-version', '../1');
    assert.equal(bad.code, 2);
    // Not a local store version id (those are numbers): a usage error, not a store failure.
    const word = await run('--to-version', 'abc');
    assert.equal(word.code, 2, word.stderr);
    assert.match(word.stderr, /--to-version must be a local store version id: a positive integer such as 3/);
    const help = await runCli(['rollback', '--help'], baseEnv());
    assert.equal(help.code, 0);
    assert.match(help.stdout, /VERSION_DESTROYED/);
  });
});
