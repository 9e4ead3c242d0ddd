// The pin step over the local store and the file pin store: a later payload step does not change
// the pinned content, a pin without the spec's digest adopts it, a pinned version whose content no
// longer matches is refused before any write, a dry run ends no pin, and a rollback without a pin
// store says so.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { PullSecretError } from '../../src/errors/index.js';
import { ManifestDirectoryTarget } from '../../src/kube/manifest-directory.js';
import { createLogger } from '../../src/observability/logger.js';
import { defaultSecretId } from '../../src/pullsecret/identifiers.js';
import { reconcilePullSecret } from '../../src/reconcile/reconcile-pull-secret.js';
import type { ReconcileStep } from '../../src/reconcile/steps.js';
import { filePinStore } from '../../src/retention/pin-objects.js';
import { pinStep } from '../../src/retention/pin-step.js';
import type { PinStore } from '../../src/retention/pin.js';
import { rollbackPullSecret } from '../../src/retention/rollback.js';
import { LocalStore } from '../../src/stores/local/index.js';
import { CANARY_PULL_SECRET } from '../support/fixtures.js';

const RETRY = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 };
const content = (n: number) =>
  CANARY_PULL_SECRET.replace(/"email":"canary@example\.com"/g, `"email":"ops${n}@example.com"`);

/** A payload step like the transfer merge: adds a registry. */
const addsRegistry: ReconcileStep = {
  async preparePayload(_ctx, payload) {
    const doc = JSON.parse(payload.toString()) as { auths: Record<string, unknown> };
    doc.auths['merged.example.com'] = { auth: Buffer.from('new:owner').toString('base64') };
    return { payload: Buffer.from(JSON.stringify(doc)) };
  },
};

describe('the rollback pin step', () => {
  let dir: string;
  let store: LocalStore;
  let pins: PinStore;
  const lines: string[] = [];
  const log = createLogger({
    level: 'debug',
    destination: new Writable({
      write(chunk: Buffer, _e, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-pin-step-'));
    store = new LocalStore({ dir: join(dir, 'store') });
    pins = filePinStore(join(dir, 'pins'));
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function rolledBack(clusterId: string) {
    for (const n of [1, 2])
      await reconcilePullSecret({ clusterId, pullSecretData: content(n) }, { store, retry: RETRY, log });
    return rollbackPullSecret({ clusterId, by: 'test' }, { store, retry: RETRY, log, pins });
  }
  const reconcile = (clusterId: string, n: number, dryRun = false) =>
    reconcilePullSecret(
      { clusterId, pullSecretData: content(n), dryRun },
      { store, retry: RETRY, log, steps: [pinStep(pins), addsRegistry] },
    );
  const latest = async (clusterId: string) =>
    (await store.accessLatestEnabled(defaultSecretId(clusterId)))?.data.toString() ?? '';

  it('serves the pinned content as it is (no later payload step), adopting the spec digest once', async () => {
    const rollback = await rolledBack('c-step-1');
    assert.equal(rollback.pin?.specSha256, undefined);
    const result = await reconcile('c-step-1', 2);
    assert.equal(result.outcome, 'unchanged');
    assert.deepEqual(result.pin, { sourceVersion: '1', version: '3', by: 'test', at: rollback.pin?.at });
    assert.equal(await latest('c-step-1'), content(1));
    assert.match((await pins.get('c-step-1'))?.specSha256 ?? '', /^[0-9a-f]{64}$/);
    // Someone adds another version: the pinned content is written again.
    await store.addVersion(defaultSecretId('c-step-1'), Buffer.from(content(9)));
    assert.equal((await reconcile('c-step-1', 2)).outcome, 'updated');
    assert.equal(await latest('c-step-1'), content(1));
    const followed = await pins.get('c-step-1');
    assert.deepEqual(
      [followed?.version, followed?.specSha256 !== undefined],
      ['5', true],
      'the pin follows v5',
    );
    assert.equal((await reconcile('c-step-1', 2)).outcome, 'unchanged');
    // The spec changes: the pin ends and the spec (with the merge) is served.
    const changed = await reconcile('c-step-1', 3);
    assert.equal(changed.pin, undefined);
    assert.match(await latest('c-step-1'), /merged\.example\.com/);
    assert.equal(await pins.get('c-step-1'), undefined);
  });

  it('refuses a pinned version whose content no longer matches, before any write', async () => {
    await rolledBack('c-step-2');
    const pin = await pins.get('c-step-2');
    assert.ok(pin);
    await pins.put({ ...pin, contentSha256: '0'.repeat(64) });
    const versions = (await store.describe(defaultSecretId('c-step-2')))?.versions.length;
    await assert.rejects(reconcile('c-step-2', 2), (err: unknown) => {
      assert.ok(err instanceof PullSecretError);
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.match(err.message, /does not hold the content the rollback pinned; release the pin/);
      return true;
    });
    assert.equal((await store.describe(defaultSecretId('c-step-2')))?.versions.length, versions);
  });

  it('a dry run ends no pin; an expired pin ends on the next reconcile', async () => {
    await rolledBack('c-step-3');
    const pin = await pins.get('c-step-3');
    assert.ok(pin);
    await pins.put({ ...pin, expiresAt: new Date(Date.now() - 1000).toISOString() });
    await reconcile('c-step-3', 2, true);
    assert.ok(await pins.get('c-step-3'), 'still there after the dry run');
    await reconcile('c-step-3', 2);
    assert.equal(await pins.get('c-step-3'), undefined);
    assert.match(await latest('c-step-3'), /merged\.example\.com/);
    assert.ok(lines.some((l) => l.includes('"ended":"expired"')));
  });

  it('Job mode (writeKubernetes false): the version and the pin are written, the cluster Secret is not', async () => {
    for (const n of [1, 2])
      await reconcilePullSecret(
        { clusterId: 'c-step-5', pullSecretData: content(n) },
        { store, retry: RETRY, log },
      );
    const manifests = join(dir, 'manifests');
    const result = await rollbackPullSecret(
      { clusterId: 'c-step-5', by: 'test' },
      {
        store,
        retry: RETRY,
        log,
        pins,
        kubernetes: new ManifestDirectoryTarget({ directory: manifests }),
        writeKubernetes: false,
      },
    );
    assert.deepEqual([result.push.version, result.pin?.version, result.kubernetes], ['3', '3', undefined]);
    await assert.rejects(readdir(manifests), { code: 'ENOENT' });
  });

  it('without a pin store the rollback warns that nothing holds it', async () => {
    for (const n of [1, 2])
      await reconcilePullSecret(
        { clusterId: 'c-step-4', pullSecretData: content(n) },
        { store, retry: RETRY, log },
      );
    const result = await rollbackPullSecret({ clusterId: 'c-step-4' }, { store, retry: RETRY, log });
    assert.equal(result.pin, undefined);
    assert.ok(lines.some((l) => l.includes('No place for a rollback pin')));
  });
});
