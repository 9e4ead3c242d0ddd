// The test server's per-project quotas, over gRPC with a plain grpc-js client (as server.test.ts),
// and the sliding window on its own with explicit times.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { secretManagerServiceDefinition } from './service-definition.js';
import {
  METHOD_NAMES,
  QUOTA_OF,
  QuotaEnforcer,
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from './index.js';

type Message = Record<string, unknown>;

function rpc(client: grpc.Client, method: string, request: Message): Promise<Message> {
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

/** The status code name of a call's answer (`OK` or the error's). */
async function codeOf(client: grpc.Client, method: string, request: Message): Promise<string> {
  return rpc(client, method, request).then(
    () => 'OK',
    (e: grpc.ServiceError) => grpc.status[e.code] ?? String(e.code),
  );
}

describe('quota window', () => {
  test('sliding: a call leaves the window once it is older than the window; refused calls use up nothing', () => {
    const quotas = new QuotaEnforcer({ windowMs: 1000, limits: { writes: 2 } });
    const write = (now: number) => quotas.admit('AddSecretVersion', 'projects/p/secrets/s', now)?.quota;
    assert.equal(write(0), undefined);
    assert.equal(write(500), undefined);
    assert.equal(write(900), 'writes', 'a third write within the window is refused');
    assert.equal(write(999), 'writes');
    assert.equal(write(1000.5), undefined, 'the write at 0 left the window (refused ones never entered it)');
    assert.equal(write(1001), 'writes', 'the one at 500 is still in');
    assert.equal(write(1500.5), undefined);
    assert.deepEqual(quotas.refused, { reads: 0, writes: 3, accesses: 0 });
    assert.deepEqual(quotas.admitted, { reads: 0, writes: 4, accesses: 0 });
    assert.equal(
      quotas.admit('AddSecretVersion', 'projects/other/secrets/s', 1001),
      undefined,
      'per project',
    );
    assert.equal(quotas.admit('GetSecret', 'projects/p/secrets/s', 1001), undefined, 'per quota');
  });

  test("the service's figures and every RPC counted against one of them", () => {
    const quotas = new QuotaEnforcer();
    assert.deepEqual(quotas.limits, { reads: 600, writes: 600, accesses: 90_000 });
    assert.equal(quotas.windowMs, 60_000);
    assert.deepEqual(
      METHOD_NAMES.filter((m) => QUOTA_OF[m] === 'accesses'),
      ['AccessSecretVersion'],
    );
    assert.deepEqual(
      METHOD_NAMES.filter((m) => QUOTA_OF[m] === 'reads'),
      ['ListSecrets', 'GetSecret', 'GetSecretVersion', 'ListSecretVersions', 'TestIamPermissions'],
    );
    assert.throws(() => new QuotaEnforcer({ windowMs: 0 }), RangeError);
  });
});

describe('quotas over gRPC', () => {
  let server: SecretManagerTestServer;
  let plain: SecretManagerTestServer;
  let client: grpc.Client;
  let plainClient: grpc.Client;
  const Client = grpc.makeClientConstructor(secretManagerServiceDefinition(), 'SecretManagerService');

  before(async () => {
    server = await startSecretManagerTestServer({
      quotas: { windowMs: 400, limits: { reads: 3, writes: 2, accesses: 4 } },
    });
    plain = await startSecretManagerTestServer();
    client = new Client(server.address, grpc.credentials.createInsecure());
    plainClient = new Client(plain.address, grpc.credentials.createInsecure());
  });

  after(async () => {
    client.close();
    plainClient.close();
    await Promise.all([server.stop(), plain.stop()]);
  });

  test('off by default: no call is ever refused', async () => {
    assert.equal(plain.quotas, undefined);
    const codes = await Promise.all(
      Array.from({ length: 50 }, () =>
        codeOf(plainClient, 'GetSecret', { name: 'projects/p/secrets/absent' }),
      ),
    );
    assert.deepEqual(new Set(codes), new Set(['NOT_FOUND']));
  });

  test("calls beyond a quota get RESOURCE_EXHAUSTED with the service's message and details; other quotas and projects are unaffected", async () => {
    server.resetCalls();
    const get = (project: string) =>
      codeOf(client, 'GetSecret', { name: `projects/${project}/secrets/absent` });
    // A call the service answers with an error (NOT_FOUND) still uses up quota.
    assert.deepEqual(
      [await get('p'), await get('p'), await get('p')],
      ['NOT_FOUND', 'NOT_FOUND', 'NOT_FOUND'],
    );
    const refused = await rpc(client, 'GetSecret', { name: 'projects/p/secrets/absent' }).then(
      () => assert.fail('the fourth read should be refused'),
      (e: grpc.ServiceError) => e,
    );
    assert.equal(refused.code, 8);
    assert.equal(
      refused.details,
      "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute per project' of service 'secretmanager.googleapis.com' for consumer 'projects/p'.",
    );
    const trailer = refused.metadata.get('grpc-status-details-bin')[0];
    assert.ok(Buffer.isBuffer(trailer));
    for (const part of [
      'RATE_LIMIT_EXCEEDED',
      'type.googleapis.com/google.rpc.ErrorInfo',
      'type.googleapis.com/google.rpc.QuotaFailure',
      'secretmanager.googleapis.com/read_requests',
    ]) {
      assert.ok(trailer.includes(part), part);
    }
    assert.equal(await get('other'), 'NOT_FOUND', 'another project has its own quota');
    assert.equal(
      await codeOf(client, 'CreateSecret', {
        parent: 'projects/p',
        secretId: 's1',
        secret: { replication: { automatic: {} } },
      }),
      'OK',
      'writes are counted apart',
    );
    assert.equal(
      await codeOf(client, 'AddSecretVersion', {
        parent: 'projects/p/secrets/s1',
        payload: { data: Buffer.from('x') },
      }),
      'OK',
    );
    assert.equal(
      await codeOf(client, 'AddSecretVersion', {
        parent: 'projects/p/secrets/s1',
        payload: { data: Buffer.from('y') },
      }),
      'RESOURCE_EXHAUSTED',
    );
    assert.equal(server.state.versionsOf('s1', 'p').length, 1, 'a refused write changes nothing');
    // Refused calls are in the counts and the log.
    assert.equal(server.calls.GetSecret, 5);
    assert.equal(server.callLog.filter((c) => c.code === 'RESOURCE_EXHAUSTED').length, 2);
    assert.deepEqual(server.quotas?.refused, { reads: 1, writes: 1, accesses: 0 });
    await sleep(450);
    assert.equal(await get('p'), 'NOT_FOUND', 'admitted again once the window slid past');
  });
});
