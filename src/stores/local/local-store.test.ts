import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalStore } from './local-store.js';
import { fileStem } from './secret-record.js';

const LABELS = { 'managed-by': 'hyperfleet', 'cluster-id': 'cls-1' };
const ID = 'hyperfleet-cls-1-pull-secret';

async function withStore(fn: (store: LocalStore, dir: string) => Promise<void>, key?: Buffer): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'local-store-'));
  const store = new LocalStore({ dir, key });
  try {
    await fn(store, dir);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function recordFile(dir: string, id = ID): string {
  return join(dir, 'secrets', `${fileStem(id)}.json`);
}

test('round trip: create, add, read back, describe', async () => {
  await withStore(async (store, dir) => {
    assert.equal(store.kind, 'local');
    assert.equal(store.location, dir);
    assert.equal(store.maxPayloadBytes, 65536);
    assert.equal(await store.getSecret(ID), undefined);
    assert.equal(await store.describe(ID), undefined);

    const created = await store.createSecret(ID, LABELS);
    assert.ok(created);
    assert.equal(created.name, ID);
    assert.equal(created.path, `local:secrets/${ID}`);
    assert.equal(store.secretPath(ID), created.path);
    assert.deepEqual(created.labels, LABELS);
    assert.ok(!Number.isNaN(Date.parse(created.createdTime)));
    assert.ok(created.etag);
    assert.deepEqual(await store.getSecret(ID), created);
    assert.equal(await store.accessLatestEnabled(ID), undefined, 'no versions yet');

    const payload = Buffer.from('{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}');
    const v1 = await store.addVersion(ID, payload);
    assert.equal(v1.version, '1');
    assert.equal(v1.path, `local:secrets/${ID}/versions/1`);
    assert.equal(v1.state, 'ENABLED');
    const latest = await store.accessLatestEnabled(ID);
    assert.deepEqual(latest, { version: '1', path: v1.path, data: payload });
    assert.deepEqual((await store.accessVersion(ID, '1')).data, payload);
  });
});

test('versions are numbered 1, 2, 3 and described newest first; an empty payload is a valid version', async () => {
  await withStore(async (store) => {
    await store.createSecret(ID, LABELS);
    for (const text of ['one', 'two', '']) await store.addVersion(ID, Buffer.from(text));
    const description = await store.describe(ID);
    assert.deepEqual(
      description?.versions.map((v) => [v.version, v.state]),
      [
        ['3', 'ENABLED'],
        ['2', 'ENABLED'],
        ['1', 'ENABLED'],
      ],
    );
    assert.equal((await store.accessVersion(ID, '2')).data.toString(), 'two');
    assert.equal((await store.accessLatestEnabled(ID))?.version, '3');
    assert.equal((await store.accessLatestEnabled(ID))?.data.length, 0);
  });
});

test('createSecret returns undefined when the secret exists and leaves it as it was', async () => {
  await withStore(async (store) => {
    const first = await store.createSecret(ID, LABELS);
    await store.addVersion(ID, Buffer.from('x'));
    assert.equal(await store.createSecret(ID, { other: 'labels' }), undefined);
    assert.deepEqual(await store.getSecret(ID), first);
    assert.equal((await store.describe(ID))?.versions.length, 1);
  });
});

test('ids, labels and version ids are validated before anything is written', async () => {
  await withStore(async (store, dir) => {
    await assert.rejects(store.createSecret('bad/id', LABELS), { code: 'IDENTIFIER_INVALID' });
    await assert.rejects(store.createSecret('a'.repeat(256), LABELS), { code: 'IDENTIFIER_INVALID' });
    await assert.rejects(store.getSecret(''), { code: 'IDENTIFIER_INVALID' });
    await assert.rejects(store.addVersion('x y', Buffer.from('x')), { code: 'IDENTIFIER_INVALID' });
    await assert.rejects(store.createSecret(ID, { 'Managed-By': 'x' }), { code: 'IDENTIFIER_INVALID' });
    await assert.rejects(store.createSecret(ID, { owner: 'Upper' }), { code: 'IDENTIFIER_INVALID' });
    const tooMany = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    await assert.rejects(store.createSecret(ID, tooMany), { code: 'STORE_INVALID_REQUEST' });
    await assert.rejects(store.accessVersion(ID, 'latest'), { code: 'STORE_INVALID_REQUEST' });
    await assert.rejects(store.accessVersion(ID, '0'), { code: 'STORE_INVALID_REQUEST' });
    await assert.rejects(stat(join(dir, 'secrets')), { code: 'ENOENT' });
  });
});

test('ids that are long or mixed case get distinct, valid file names', async () => {
  await withStore(async (store) => {
    const ids = ['Pull-Secret', 'pull-secret', 'PULL-SECRET', 'a'.repeat(255), `${'a'.repeat(254)}B`];
    for (const id of ids) assert.ok(await store.createSecret(id, LABELS), id);
    for (const [i, id] of ids.entries()) await store.addVersion(id, Buffer.from(`payload ${i}`));
    for (const [i, id] of ids.entries())
      assert.equal((await store.accessLatestEnabled(id))?.data.toString(), `payload ${i}`);
  });
});

test('payloads up to 65536 bytes are accepted; larger ones fail with PAYLOAD_TOO_LARGE', async () => {
  await withStore(async (store) => {
    await store.createSecret(ID, LABELS);
    const max = randomBytes(65536);
    await store.addVersion(ID, max);
    assert.deepEqual((await store.accessLatestEnabled(ID))?.data, max);
    await assert.rejects(store.addVersion(ID, Buffer.alloc(65537)), { code: 'PAYLOAD_TOO_LARGE' });
    assert.equal((await store.describe(ID))?.versions.length, 1);
  });
});

test('accessLatestEnabled skips disabled and destroyed versions; accessVersion refuses them', async () => {
  await withStore(async (store) => {
    await store.createSecret(ID, LABELS);
    for (const text of ['one', 'two', 'three']) await store.addVersion(ID, Buffer.from(text));
    assert.equal((await store.disableVersion(ID, '3')).state, 'DISABLED');
    assert.equal((await store.disableVersion(ID, '3')).state, 'DISABLED', 'idempotent');
    assert.equal((await store.accessLatestEnabled(ID))?.data.toString(), 'two');
    await assert.rejects(store.accessVersion(ID, '3'), {
      code: 'VERSION_NOT_ENABLED',
      message: /versions\/3 is DISABLED/,
    });

    assert.equal((await store.destroyVersion(ID, '2')).state, 'DESTROYED');
    assert.equal((await store.accessLatestEnabled(ID))?.data.toString(), 'one');
    await assert.rejects(store.accessVersion(ID, '2'), { code: 'VERSION_NOT_ENABLED' });
    await assert.rejects(store.enableVersion(ID, '2'), { code: 'STORE_INVALID_REQUEST' });

    await store.disableVersion(ID, '1');
    assert.equal(await store.accessLatestEnabled(ID), undefined);
    assert.equal((await store.enableVersion(ID, '3')).state, 'ENABLED');
    assert.equal((await store.accessLatestEnabled(ID))?.data.toString(), 'three');

    assert.equal((await store.addVersion(ID, Buffer.from('four'))).version, '4', 'numbers are never reused');
    const states = (await store.describe(ID))?.versions.map((v) => `${v.version}:${v.state}`);
    assert.deepEqual(states, ['4:ENABLED', '3:ENABLED', '2:DESTROYED', '1:DISABLED']);
  });
});

test('missing secrets and versions fail with SECRET_NOT_FOUND', async () => {
  await withStore(async (store) => {
    await assert.rejects(store.accessLatestEnabled(ID), { code: 'SECRET_NOT_FOUND' });
    await assert.rejects(store.accessVersion(ID, '1'), { code: 'SECRET_NOT_FOUND' });
    await assert.rejects(store.addVersion(ID, Buffer.from('x')), { code: 'SECRET_NOT_FOUND' });
    await assert.rejects(store.disableVersion(ID, '1'), { code: 'SECRET_NOT_FOUND' });
    await store.createSecret(ID, LABELS);
    await assert.rejects(store.accessVersion(ID, '1'), {
      code: 'SECRET_NOT_FOUND',
      message: /versions\/1 does not exist/,
    });
  });
});

test('deleteSecret removes the secret and its versions; a new secret of that name starts over', async () => {
  await withStore(async (store, dir) => {
    assert.equal(await store.deleteSecret(ID), false);
    await store.createSecret(ID, LABELS);
    await store.addVersion(ID, Buffer.from('a'));
    await store.addVersion(ID, Buffer.from('b'));
    assert.equal(await store.deleteSecret(ID), true);
    assert.equal(await store.getSecret(ID), undefined);
    await assert.rejects(stat(recordFile(dir)), { code: 'ENOENT' });
    assert.ok(await store.createSecret(ID, LABELS));
    assert.equal((await store.addVersion(ID, Buffer.from('c'))).version, '1');
  });
});

test('an aborted signal fails with ABORTED and a closed store refuses calls', async () => {
  await withStore(async (store) => {
    const signal = AbortSignal.abort();
    await assert.rejects(store.createSecret(ID, LABELS, { signal }), { code: 'ABORTED' });
    await assert.rejects(store.getSecret(ID, { signal }), { code: 'ABORTED' });
    assert.equal(await store.getSecret(ID), undefined);
    await store.close();
    await store.close();
    await assert.rejects(store.getSecret(ID), { code: 'STORE_FAILED', message: /closed/ });
  });
});

test('compare-and-add: ifLatest must name the newest enabled version (null: none), checked under the lock', async () => {
  await withStore(async (store) => {
    await store.createSecret(ID, LABELS);
    assert.equal((await store.addVersion(ID, Buffer.from('one'), { ifLatest: null })).version, '1');
    await assert.rejects(
      store.addVersion(ID, Buffer.from('again'), { ifLatest: null }),
      (err: Error & { code?: string; retryable?: boolean }) => {
        assert.equal(err.code, 'STORE_PRECONDITION_FAILED');
        assert.equal(err.retryable, true);
        assert.match(err.message, /newest enabled version is 1, not none/);
        return true;
      },
    );
    assert.equal((await store.addVersion(ID, Buffer.from('two'), { ifLatest: '1' })).version, '2');
    await store.disableVersion(ID, '2');
    await assert.rejects(store.addVersion(ID, Buffer.from('x'), { ifLatest: '2' }), {
      code: 'STORE_PRECONDITION_FAILED',
    });
    assert.equal((await store.addVersion(ID, Buffer.from('three'), { ifLatest: '1' })).version, '3');

    // Racing on one newest version: exactly one of many wins.
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => store.addVersion(ID, Buffer.from(`race ${i}`), { ifLatest: '3' })),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    assert.deepEqual(
      (await store.describe(ID))?.versions.map((v) => v.version),
      ['4', '3', '2', '1'],
    );
  });
});
