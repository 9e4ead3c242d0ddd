// The test server's own rules, checked over gRPC with a plain grpc-js client built from the same
// protos (no SDK in between), so every status code and field is what goes over the wire.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { crc32c } from '../../../src/stores/gcp-secret-manager/crc32c.js';
import { secretManagerServiceDefinition } from './service-definition.js';
import { startSecretManagerTestServer, type SecretManagerTestServer } from './index.js';

type Message = Record<string, unknown>;

let server: SecretManagerTestServer;
let client: grpc.Client;
const P = 'projects/test-project';
/** Answers name the project by its number, whatever the request named it by (names.ts). */
const N = () => `projects/${server.projectNumber}`;
const AUTO = { replication: { automatic: {} } };

function rpc(method: string, request: Message): Promise<Message> {
  const fn = (
    client as unknown as Record<
      string,
      (req: Message, cb: (err: grpc.ServiceError | null, res: Message) => void) => void
    >
  )[method];
  assert.ok(fn, `no client method ${method}`);
  return new Promise((resolve, reject) =>
    fn.call(client, request, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

async function rpcFails(
  method: string,
  request: Message,
  code: grpc.status,
  message?: RegExp,
): Promise<grpc.ServiceError> {
  const err = await rpc(method, request).then(
    () => assert.fail(`${method} should fail with ${grpc.status[code]}`),
    (e: grpc.ServiceError) => e,
  );
  assert.equal(err.code, code, `${method}: ${err.message}`);
  if (message) assert.match(err.details, message);
  return err;
}

async function createWithVersions(id: string, ...payloads: string[]): Promise<void> {
  await rpc('CreateSecret', { parent: P, secretId: id, secret: AUTO });
  for (const data of payloads)
    await rpc('AddSecretVersion', { parent: `${P}/secrets/${id}`, payload: { data: Buffer.from(data) } });
}

before(async () => {
  server = await startSecretManagerTestServer();
  const Client = grpc.makeClientConstructor(secretManagerServiceDefinition(), 'SecretManagerService');
  client = new Client(server.address, grpc.credentials.createInsecure());
});

after(async () => {
  client.close();
  await server.stop();
  await server.stop();
});

beforeEach(() => {
  server.state.clear();
  server.clearFaults();
  server.setGrantedPermissions(undefined);
  server.resetCalls();
});

describe('secrets', () => {
  test('create enforces the id, replication and label rules', async () => {
    const created = await rpc('CreateSecret', {
      parent: P,
      secretId: 'a_B-9',
      secret: { ...AUTO, labels: { 'managed-by': 'hyperfleet', empty: '' } },
    });
    assert.equal(created.name, `${N()}/secrets/a_B-9`);
    assert.match(String(created.etag), /^"[0-9a-f]{14}"$/);
    assert.ok(Number((created.createTime as { seconds: string }).seconds) > 1_600_000_000);
    await rpc('CreateSecret', { parent: P, secretId: 'x'.repeat(255), secret: AUTO });

    for (const secretId of ['', 'x'.repeat(256), 'has space', 'dot.ted', 'slash/ed']) {
      await rpcFails('CreateSecret', { parent: P, secretId, secret: AUTO }, grpc.status.INVALID_ARGUMENT);
    }
    await rpcFails(
      'CreateSecret',
      { parent: P, secretId: 'norepl', secret: {} },
      grpc.status.INVALID_ARGUMENT,
      /replication is required/,
    );
    await rpcFails(
      'CreateSecret',
      { parent: P, secretId: 'norepl' },
      grpc.status.INVALID_ARGUMENT,
      /replication is required/,
    );
    const badLabels = [
      { Upper: 'x' },
      { '1digit': 'x' },
      { ['k'.repeat(64)]: 'x' },
      { key: 'UPPER' },
      { key: 'v'.repeat(64) },
      { key: 'dot.ted' },
    ];
    for (const labels of badLabels) {
      await rpcFails(
        'CreateSecret',
        { parent: P, secretId: 'labels', secret: { ...AUTO, labels } },
        grpc.status.INVALID_ARGUMENT,
        /Label/,
      );
    }
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, `v${i}`]));
    await rpcFails(
      'CreateSecret',
      { parent: P, secretId: 'labels', secret: { ...AUTO, labels: many(65) } },
      grpc.status.INVALID_ARGUMENT,
      /at most 64/,
    );
    await rpc('CreateSecret', { parent: P, secretId: 'labels', secret: { ...AUTO, labels: many(64) } });
    await rpcFails(
      'CreateSecret',
      { parent: P, secretId: 'labels', secret: AUTO },
      grpc.status.ALREADY_EXISTS,
      /already exists/,
    );
    await rpcFails(
      'CreateSecret',
      { parent: 'organizations/1', secretId: 'x', secret: AUTO },
      grpc.status.INVALID_ARGUMENT,
    );
    await rpcFails(
      'GetSecret',
      { name: `${P}/secrets/missing` },
      grpc.status.NOT_FOUND,
      new RegExp(`^Secret \\[${N()}/secrets/missing\\] not found\\.$`),
    );
  });

  test('names: the project id and its number reach the same secret; answers carry the number', async () => {
    const created = await rpc('CreateSecret', { parent: P, secretId: 'n', secret: AUTO });
    assert.equal(created.name, `${N()}/secrets/n`);
    assert.match(server.projectNumber, /^[0-9]{12}$/);
    assert.equal((await rpc('GetSecret', { name: `${N()}/secrets/n` })).name, `${N()}/secrets/n`);
    const version = await rpc('AddSecretVersion', {
      parent: `${N()}/secrets/n`,
      payload: { data: Buffer.from('x') },
    });
    assert.equal(version.name, `${N()}/secrets/n/versions/1`);
    assert.equal(
      (await rpc('AccessSecretVersion', { name: `${P}/secrets/n/versions/latest` })).name,
      `${N()}/secrets/n/versions/1`,
    );
    await rpcFails(
      'CreateSecret',
      { parent: N(), secretId: 'n', secret: AUTO },
      grpc.status.ALREADY_EXISTS,
      new RegExp(`^Secret \\[${N()}/secrets/n\\] already exists\\.$`),
    );
    assert.deepEqual(
      ((await rpc('ListSecrets', { parent: N() })).secrets as Message[]).map((x) => x.name),
      [`${N()}/secrets/n`],
    );
    assert.equal(server.state.findSecret('n')?.name, `${N()}/secrets/n`);
  });

  test('update changes labels or annotations under update_mask with a new etag; stale etags are FAILED_PRECONDITION', async () => {
    const created = await rpc('CreateSecret', {
      parent: P,
      secretId: 's',
      secret: { ...AUTO, labels: { a: '1' } },
    });
    const updated = await rpc('UpdateSecret', {
      secret: { name: `${P}/secrets/s`, labels: { b: '2' }, etag: created.etag },
      updateMask: { paths: ['labels'] },
    });
    assert.deepEqual(updated.labels, { b: '2' });
    assert.notEqual(updated.etag, created.etag);
    await rpcFails(
      'UpdateSecret',
      {
        secret: { name: `${P}/secrets/s`, labels: {}, etag: created.etag },
        updateMask: { paths: ['labels'] },
      },
      grpc.status.FAILED_PRECONDITION,
    );
    await rpcFails(
      'UpdateSecret',
      { secret: { name: `${P}/secrets/s`, labels: {} } },
      grpc.status.INVALID_ARGUMENT,
      /update_mask/,
    );
    await rpcFails(
      'UpdateSecret',
      { secret: { name: `${P}/secrets/s`, labels: { B: 'x' } }, updateMask: { paths: ['labels'] } },
      grpc.status.INVALID_ARGUMENT,
    );

    const annotated = await rpc('UpdateSecret', {
      secret: {
        name: `${P}/secrets/s`,
        annotations: { 'hyperfleet-write-intent': 'writer=w;expires=x', keep: 'me' },
        etag: updated.etag,
      },
      updateMask: { paths: ['annotations'] },
    });
    assert.deepEqual(annotated.annotations, { 'hyperfleet-write-intent': 'writer=w;expires=x', keep: 'me' });
    assert.deepEqual(annotated.labels, { b: '2' }, 'fields outside the mask are kept');
    await rpcFails(
      'UpdateSecret',
      {
        secret: { name: `${P}/secrets/s`, annotations: {}, etag: updated.etag },
        updateMask: { paths: ['annotations'] },
      },
      grpc.status.FAILED_PRECONDITION,
    );
    await rpcFails(
      'UpdateSecret',
      {
        secret: { name: `${P}/secrets/s`, annotations: { 'hyperfleet.io/x': '1' } },
        updateMask: { paths: ['annotations'] },
      },
      grpc.status.INVALID_ARGUMENT,
      /Annotation key/,
    );
    await rpcFails(
      'UpdateSecret',
      {
        secret: { name: `${P}/secrets/s`, annotations: { big: 'x'.repeat(16_384) } },
        updateMask: { paths: ['annotations'] },
      },
      grpc.status.INVALID_ARGUMENT,
      /16384/,
    );

    await rpcFails(
      'DeleteSecret',
      { name: `${P}/secrets/s`, etag: created.etag },
      grpc.status.FAILED_PRECONDITION,
    );
    await rpc('DeleteSecret', { name: `${P}/secrets/s`, etag: annotated.etag });
    await rpcFails('DeleteSecret', { name: `${P}/secrets/s` }, grpc.status.NOT_FOUND);
  });

  test('list pages and filters by label', async () => {
    for (const id of ['a', 'b', 'c'])
      await rpc('CreateSecret', {
        parent: P,
        secretId: id,
        secret: { ...AUTO, labels: { keep: id === 'b' ? 'no' : 'yes' } },
      });
    const first = await rpc('ListSecrets', { parent: P, pageSize: 2 });
    assert.deepEqual(
      (first.secrets as Message[]).map((s) => s.name),
      [`${N()}/secrets/a`, `${N()}/secrets/b`],
    );
    const second = await rpc('ListSecrets', { parent: P, pageSize: 2, pageToken: first.nextPageToken });
    assert.deepEqual(
      (second.secrets as Message[]).map((s) => s.name),
      [`${N()}/secrets/c`],
    );
    assert.equal(second.nextPageToken ?? '', '');
    const kept = await rpc('ListSecrets', { parent: P, filter: 'labels.keep=yes' });
    assert.deepEqual(
      (kept.secrets as Message[]).map((s) => s.name),
      [`${N()}/secrets/a`, `${N()}/secrets/c`],
    );
    await rpcFails(
      'ListSecrets',
      { parent: P, pageToken: first.nextPageToken, filter: 'labels.keep=yes' },
      grpc.status.INVALID_ARGUMENT,
    );
  });
});

describe('versions', () => {
  test('add numbers versions, enforces the 64 KiB limit and checks data_crc32c', async () => {
    await rpc('CreateSecret', { parent: P, secretId: 's', secret: AUTO });
    const data = Buffer.from('payload');
    const v1 = await rpc('AddSecretVersion', {
      parent: `${P}/secrets/s`,
      payload: { data, dataCrc32c: crc32c(data) },
    });
    assert.equal(v1.name, `${N()}/secrets/s/versions/1`);
    assert.equal(v1.state, 'ENABLED');
    assert.equal(v1.clientSpecifiedPayloadChecksum, true);
    const v2 = await rpc('AddSecretVersion', {
      parent: `${P}/secrets/s`,
      payload: { data: Buffer.alloc(65_536) },
    });
    assert.equal(v2.name, `${N()}/secrets/s/versions/2`);
    assert.equal(v2.clientSpecifiedPayloadChecksum ?? false, false);
    await rpcFails(
      'AddSecretVersion',
      { parent: `${P}/secrets/s`, payload: { data: Buffer.alloc(65_537) } },
      grpc.status.INVALID_ARGUMENT,
      /65536/,
    );
    await rpcFails(
      'AddSecretVersion',
      { parent: `${P}/secrets/s`, payload: { data, dataCrc32c: crc32c(data) + 1 } },
      grpc.status.INVALID_ARGUMENT,
      /[Cc]hecksum/,
    );
    await rpcFails('AddSecretVersion', { parent: `${P}/secrets/s` }, grpc.status.INVALID_ARGUMENT);
    await rpcFails(
      'AddSecretVersion',
      { parent: `${P}/secrets/missing`, payload: { data } },
      grpc.status.NOT_FOUND,
    );
    assert.equal(server.state.findSecret('s')?.versions.length, 2);
  });

  test('access by number and latest returns data and its CRC-32C; latest is the newest whatever its state', async () => {
    await createWithVersions('s', 'one', 'two', 'three');
    const latest = await rpc('AccessSecretVersion', { name: `${P}/secrets/s/versions/latest` });
    assert.equal(latest.name, `${N()}/secrets/s/versions/3`);
    const payload = latest.payload as { data: Buffer; dataCrc32c: string };
    assert.equal(payload.data.toString(), 'three');
    assert.equal(Number(payload.dataCrc32c), crc32c(Buffer.from('three')));
    const one = await rpc('AccessSecretVersion', { name: `${P}/secrets/s/versions/1` });
    assert.equal((one.payload as { data: Buffer }).data.toString(), 'one');

    await rpc('DisableSecretVersion', { name: `${P}/secrets/s/versions/3` });
    await rpcFails(
      'AccessSecretVersion',
      { name: `${P}/secrets/s/versions/latest` },
      grpc.status.FAILED_PRECONDITION,
      new RegExp(`^Secret Version \\[${N()}/secrets/s/versions/3\\] is in DISABLED state\\.$`),
    );
    await rpcFails('AccessSecretVersion', { name: `${P}/secrets/s/versions/9` }, grpc.status.NOT_FOUND);
    await rpcFails(
      'AccessSecretVersion',
      { name: `${P}/secrets/s/versions/0` },
      grpc.status.INVALID_ARGUMENT,
    );
    await rpc('CreateSecret', { parent: P, secretId: 'empty', secret: AUTO });
    await rpcFails(
      'AccessSecretVersion',
      { name: `${P}/secrets/empty/versions/latest` },
      grpc.status.NOT_FOUND,
      /not found or has no versions/,
    );
    await rpcFails(
      'AccessSecretVersion',
      { name: `${P}/secrets/missing/versions/latest` },
      grpc.status.NOT_FOUND,
      /not found or has no versions/,
    );
    const got = await rpc('GetSecretVersion', { name: `${P}/secrets/s/versions/latest` });
    assert.deepEqual([got.name, got.state], [`${N()}/secrets/s/versions/3`, 'DISABLED']);
  });

  test('state machine: enable ⇄ disable, destroy is final and wipes the payload; etags change (no-ops too) and stale ones are FAILED_PRECONDITION', async () => {
    await createWithVersions('s', 'one');
    const name = `${P}/secrets/s/versions/1`;
    const before = await rpc('GetSecretVersion', { name });
    const disabled = await rpc('DisableSecretVersion', { name, etag: before.etag });
    assert.equal(disabled.state, 'DISABLED');
    assert.notEqual(disabled.etag, before.etag);
    await rpcFails(
      'EnableSecretVersion',
      { name, etag: before.etag },
      grpc.status.FAILED_PRECONDITION,
      /etag/,
    );
    const enabled = await rpc('EnableSecretVersion', { name, etag: disabled.etag });
    assert.equal(enabled.state, 'ENABLED');
    // A no-op change renews the etag too, so a writer holding the old one loses (docs: etags).
    const again = await rpc('EnableSecretVersion', { name });
    assert.equal(again.state, 'ENABLED');
    assert.notEqual(again.etag, enabled.etag);
    await rpcFails('DisableSecretVersion', { name, etag: enabled.etag }, grpc.status.FAILED_PRECONDITION);
    // The version's etag is its own: updating the secret leaves it as it is, and the other way round.
    const secret = await rpc('GetSecret', { name: `${P}/secrets/s` });
    await rpc('UpdateSecret', {
      secret: { name: `${P}/secrets/s`, labels: { x: 'y' } },
      updateMask: { paths: ['labels'] },
    });
    assert.equal((await rpc('GetSecretVersion', { name })).etag, again.etag);
    await rpc('DisableSecretVersion', { name, etag: again.etag });
    await rpc('EnableSecretVersion', { name });
    assert.notEqual(
      (await rpc('GetSecret', { name: `${P}/secrets/s` })).etag,
      secret.etag,
      'changed by the update only',
    );
    const destroyed = await rpc('DestroySecretVersion', { name });
    assert.equal(destroyed.state, 'DESTROYED');
    assert.ok(destroyed.destroyTime);
    assert.equal(server.state.findSecret('s')?.versions[0]?.data, undefined);
    await rpcFails('EnableSecretVersion', { name }, grpc.status.FAILED_PRECONDITION, /DESTROYED state/);
    await rpcFails(
      'AccessSecretVersion',
      { name },
      grpc.status.FAILED_PRECONDITION,
      /is in DESTROYED state\./,
    );
  });

  test('list is newest first, honours state filters and pages', async () => {
    await createWithVersions('s', '1', '2', '3', '4', '5');
    await rpc('DisableSecretVersion', { name: `${P}/secrets/s/versions/5` });
    await rpc('DestroySecretVersion', { name: `${P}/secrets/s/versions/2` });
    const names = (res: Message) =>
      ((res.versions as Message[] | undefined) ?? []).map((v) => String(v.name).split('/').pop());
    const all = await rpc('ListSecretVersions', { parent: `${P}/secrets/s` });
    assert.deepEqual(names(all), ['5', '4', '3', '2', '1']);
    assert.equal(all.totalSize, 5);
    const enabled = await rpc('ListSecretVersions', { parent: `${P}/secrets/s`, filter: 'state:ENABLED' });
    assert.deepEqual(names(enabled), ['4', '3', '1']);
    const newestEnabled = await rpc('ListSecretVersions', {
      parent: `${P}/secrets/s`,
      filter: 'state:ENABLED',
      pageSize: 1,
    });
    assert.deepEqual(names(newestEnabled), ['4']);
    const page2 = await rpc('ListSecretVersions', {
      parent: `${P}/secrets/s`,
      filter: 'state:ENABLED',
      pageSize: 1,
      pageToken: newestEnabled.nextPageToken,
    });
    assert.deepEqual(names(page2), ['3']);
    await rpcFails(
      'ListSecretVersions',
      { parent: `${P}/secrets/s`, pageToken: newestEnabled.nextPageToken },
      grpc.status.INVALID_ARGUMENT,
    );
    await rpcFails(
      'ListSecretVersions',
      { parent: `${P}/secrets/s`, filter: 'create_time>0' },
      grpc.status.INVALID_ARGUMENT,
    );
    await rpcFails(
      'ListSecretVersions',
      { parent: `${P}/secrets/s`, pageSize: -1 },
      grpc.status.INVALID_ARGUMENT,
    );
    await rpcFails('ListSecretVersions', { parent: `${P}/secrets/missing` }, grpc.status.NOT_FOUND);
  });
});

describe('permissions, faults and counting', () => {
  test('TestIamPermissions grants what is asked by default, the configured set otherwise; calls need their permission', async () => {
    await createWithVersions('s', 'x');
    const asked = ['secretmanager.versions.add', 'secretmanager.versions.access'];
    assert.deepEqual(
      (await rpc('TestIamPermissions', { resource: `${P}/secrets/s`, permissions: asked })).permissions,
      asked,
    );
    server.setGrantedPermissions(['secretmanager.versions.access']);
    assert.deepEqual(
      (await rpc('TestIamPermissions', { resource: `${P}/secrets/s`, permissions: asked })).permissions,
      ['secretmanager.versions.access'],
    );
    await rpc('AccessSecretVersion', { name: `${P}/secrets/s/versions/1` });
    await rpcFails(
      'AddSecretVersion',
      { parent: `${P}/secrets/s`, payload: { data: Buffer.from('y') } },
      grpc.status.PERMISSION_DENIED,
      /^Permission 'secretmanager\.versions\.add' denied for resource 'projects\/test-project\/secrets\/s' \(or it may not exist\)\.$/,
    );
  });

  test('faults apply times, in order, per method or to any; afterApply writes first', async () => {
    await createWithVersions('s');
    server.injectFault({ method: 'GetSecret', code: grpc.status.UNAVAILABLE, times: 2 });
    server.injectFault({ method: '*', code: grpc.status.RESOURCE_EXHAUSTED });
    assert.equal(server.pendingFaults, 2);
    await rpcFails('GetSecret', { name: `${P}/secrets/s` }, grpc.status.UNAVAILABLE, /unavailable/);
    await rpcFails('GetSecret', { name: `${P}/secrets/s` }, grpc.status.UNAVAILABLE);
    await rpcFails('ListSecrets', { parent: P }, grpc.status.RESOURCE_EXHAUSTED, /Quota exceeded/);
    await rpc('GetSecret', { name: `${P}/secrets/s` });
    assert.equal(server.pendingFaults, 0);

    server.injectFault({ method: 'AddSecretVersion', code: grpc.status.DEADLINE_EXCEEDED, afterApply: true });
    await rpcFails(
      'AddSecretVersion',
      { parent: `${P}/secrets/s`, payload: { data: Buffer.from('lost') } },
      grpc.status.DEADLINE_EXCEEDED,
    );
    await rpc('AddSecretVersion', { parent: `${P}/secrets/s`, payload: { data: Buffer.from('lost') } });
    assert.deepEqual(
      server.state.versionsOf('s').map((v) => v.number),
      [2, 1],
    );

    server.injectFault({
      method: 'CreateSecret',
      code: grpc.status.PERMISSION_DENIED,
      message: 'custom text',
    });
    await rpcFails(
      'CreateSecret',
      { parent: P, secretId: 'never', secret: AUTO },
      grpc.status.PERMISSION_DENIED,
      /^custom text$/,
    );
    assert.equal(server.state.findSecret('never'), undefined);
  });

  test('counts calls per method, in total and in a log without payloads', async () => {
    await createWithVersions('s', 'secret-bytes');
    await rpcFails('GetSecret', { name: `${P}/secrets/missing` }, grpc.status.NOT_FOUND);
    assert.equal(server.calls.CreateSecret, 1);
    assert.equal(server.calls.AddSecretVersion, 1);
    assert.equal(server.calls.GetSecret, 1);
    assert.equal(server.totalCalls, 3);
    assert.deepEqual(
      server.callLog.map((c) => `${c.method} ${c.code}`),
      ['CreateSecret OK', 'AddSecretVersion OK', 'GetSecret NOT_FOUND'],
    );
    assert.ok(!JSON.stringify(server.callLog).includes('secret-bytes'));
    server.resetCalls();
    assert.equal(server.totalCalls, 0);
    assert.equal(server.callLog.length, 0);
  });
});
