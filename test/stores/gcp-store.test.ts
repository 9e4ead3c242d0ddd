// The GCP store driven through the official SDK client against the Secret Manager test server.
// Everything stays on loopback without Google credentials: no metadata-server probe, no ADC lookup.
// google-auth-library reads this variable when it would probe, so setting it after the (hoisted)
// imports is early enough.
process.env.METADATA_SERVER_DETECTION = 'none';

import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { GoogleAuth } from 'google-gax';
import { PullSecretError } from '../../src/errors/index.js';
import { gcpStoreFactory } from '../../src/stores/gcp-secret-manager/index.js';
import type { GcpSecretStore } from '../../src/stores/gcp-secret-manager/index.js';
import {
  installLoopbackGuard,
  startSecretManagerTestServer,
  type LoopbackGuard,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';

const LABELS = {
  'managed-by': 'hyperfleet',
  adapter: 'pullsecret',
  'cluster-id': 'cls-1',
  'resource-type': 'pull-secret',
  'hyperfleet-version': 'v1',
};
const CANARY = Buffer.from('{"auths":{"quay.io":{"auth":"Y2FuYXJ5LXVzZXI6Y2FuYXJ5LXBhc3N3b3Jk"}}}');

let server: SecretManagerTestServer;
let store: GcpSecretStore;
let guard: LoopbackGuard;
const apiCalls: { method: string; code: string; durationMs: number }[] = [];
let credentialLookups = 0;
/** GoogleAuth's prototype seen as a plain property bag, so `getClient` can be wrapped and restored. */
const authPrototype = GoogleAuth.prototype as unknown as { getClient: (...args: unknown[]) => unknown };
const originalGetClient = authPrototype.getClient;

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<PullSecretError> {
  const err = await promise.then(
    () => assert.fail(`expected ${code}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof PullSecretError, `not a PullSecretError: ${String(err)}`);
  assert.equal(err.code, code, err.message);
  return err;
}

before(async () => {
  guard = installLoopbackGuard();
  // Any ADC lookup (which could read key files or probe the metadata server) is counted here.
  authPrototype.getClient = function (this: GoogleAuth, ...args: unknown[]) {
    credentialLookups += 1;
    return originalGetClient.apply(this, args);
  };
  server = await startSecretManagerTestServer({ project: 'test-project', maxPageSize: 2 });
  store = (await gcpStoreFactory.create({
    projectId: 'test-project',
    endpoint: server.address,
    insecure: true,
    callTimeoutMs: 5_000,
    onApiCall: (method, code, durationMs) => apiCalls.push({ method, code, durationMs }),
  })) as GcpSecretStore;
});

after(async () => {
  await store.close();
  await store.close();
  await server.stop();
  authPrototype.getClient = originalGetClient;
  guard.uninstall();
});

beforeEach(() => {
  server.state.clear();
  server.clearFaults();
  server.setGrantedPermissions(undefined);
  server.resetCalls();
  apiCalls.length = 0;
});

describe('GCP store against the Secret Manager test server', () => {
  test('creates a secret with automatic replication and the labels; a second create answers undefined', async () => {
    const created = await store.createSecret('hyperfleet-cls-1-pull-secret', LABELS);
    assert.ok(created);
    assert.equal(created.name, 'hyperfleet-cls-1-pull-secret');
    assert.equal(created.path, 'projects/test-project/secrets/hyperfleet-cls-1-pull-secret');
    assert.equal(created.path, store.secretPath('hyperfleet-cls-1-pull-secret'));
    assert.deepEqual(created.labels, LABELS);
    assert.match(created.etag ?? '', /^"[0-9a-f]+"$/);
    assert.ok(Math.abs(Date.parse(created.createdTime) - Date.now()) < 60_000);
    assert.deepEqual(server.state.findSecret('hyperfleet-cls-1-pull-secret')?.replication, { automatic: {} });

    assert.equal(await store.createSecret('hyperfleet-cls-1-pull-secret', LABELS), undefined);
    assert.equal(server.calls.CreateSecret, 2);
    assert.deepEqual(
      apiCalls.map((c) => `${c.method} ${c.code}`),
      ['CreateSecret OK', 'CreateSecret ALREADY_EXISTS'],
    );
  });

  test('getSecret reads metadata, including labels someone else put on it; undefined when missing', async () => {
    server.state.seedSecret('foreign', { labels: { owner: 'someone-else' } });
    const secret = await store.getSecret('foreign');
    assert.deepEqual(secret?.labels, { owner: 'someone-else' });
    assert.equal(secret?.etag, server.state.findSecret('foreign')?.etag);
    assert.equal(await store.getSecret('missing'), undefined);
    assert.equal(server.totalCalls, 2);
  });

  test('adds versions 1, 2 with a CRC-32C and reads the latest in one call', async () => {
    await store.createSecret('s', LABELS);
    const v1 = await store.addVersion('s', Buffer.from('first'));
    const v2 = await store.addVersion('s', CANARY);
    assert.deepEqual(
      [v1.version, v1.state, v1.path],
      ['1', 'ENABLED', 'projects/test-project/secrets/s/versions/1'],
    );
    assert.equal(v2.version, '2');
    assert.equal(server.state.findSecret('s')?.versions[1]?.clientChecksum, true);

    server.resetCalls();
    const latest = await store.accessLatestEnabled('s');
    assert.deepEqual(latest, {
      version: '2',
      path: 'projects/test-project/secrets/s/versions/2',
      data: CANARY,
    });
    assert.equal(server.totalCalls, 1);
    assert.equal(server.calls.AccessSecretVersion, 1);

    const first = await store.accessVersion('s', '1');
    assert.equal(first.data.toString(), 'first');
  });

  test('falls back to the newest ENABLED version when latest is disabled or destroyed', async () => {
    server.state.seedSecret('s', {
      labels: LABELS,
      versions: [{ data: 'one' }, { data: 'two' }, { data: 'three', state: 'DISABLED' }],
    });
    server.resetCalls();
    const payload = await store.accessLatestEnabled('s');
    assert.equal(payload?.version, '2');
    assert.equal(payload?.data.toString(), 'two');
    assert.deepEqual(
      server.callLog.map((c) => `${c.method} ${c.resource} ${c.code}`),
      [
        'AccessSecretVersion projects/test-project/secrets/s/versions/latest FAILED_PRECONDITION',
        'ListSecretVersions projects/test-project/secrets/s OK',
        'AccessSecretVersion projects/test-project/secrets/s/versions/2 OK',
      ],
    );

    server.state.setState('s', 3, 'DESTROYED');
    server.state.setState('s', 2, 'DISABLED');
    assert.equal((await store.accessLatestEnabled('s'))?.data.toString(), 'one');
    server.state.setState('s', 1, 'DISABLED');
    assert.equal(await store.accessLatestEnabled('s'), undefined);
  });

  test('no versions answers undefined; a missing secret throws SECRET_NOT_FOUND', async () => {
    await store.createSecret('empty', LABELS);
    server.resetCalls();
    assert.equal(await store.accessLatestEnabled('empty'), undefined);
    assert.deepEqual(
      server.callLog.map((c) => `${c.method} ${c.code}`),
      ['AccessSecretVersion NOT_FOUND', 'GetSecret OK'],
    );
    const err = await rejectsWith(store.accessLatestEnabled('missing'), 'SECRET_NOT_FOUND');
    assert.match(err.message, /projects\/test-project\/secrets\/missing/);
    await rejectsWith(store.accessVersion('missing', '1'), 'SECRET_NOT_FOUND');
    await rejectsWith(store.addVersion('missing', Buffer.from('x')), 'SECRET_NOT_FOUND');
  });

  test('skipExistenceCheck: NOT_FOUND on latest is SECRET_NOT_FOUND after that one call, for no secret and for no version', async () => {
    await store.createSecret('empty', LABELS);
    for (const secretId of ['empty', 'missing']) {
      server.resetCalls();
      await rejectsWith(
        store.accessLatestEnabled(secretId, { skipExistenceCheck: true }),
        'SECRET_NOT_FOUND',
      );
      assert.deepEqual(
        server.callLog.map((c) => `${c.method} ${c.code}`),
        ['AccessSecretVersion NOT_FOUND'],
      );
    }
    // A disabled latest is still looked past: the secret exists, so the answer is the newest enabled one.
    server.state.seedSecret('s', {
      labels: LABELS,
      versions: [{ data: 'one' }, { data: 'two', state: 'DISABLED' }],
    });
    assert.equal(
      (await store.accessLatestEnabled('s', { skipExistenceCheck: true }))?.data.toString(),
      'one',
    );
  });

  test('accessing a disabled version throws VERSION_NOT_ENABLED with the service text', async () => {
    server.state.seedSecret('s', { versions: [{ data: 'one', state: 'DISABLED' }] });
    const err = await rejectsWith(store.accessVersion('s', '1'), 'VERSION_NOT_ENABLED');
    assert.match(err.message, /FAILED_PRECONDITION/);
    assert.match(err.message, /is in DISABLED state/);
    assert.equal(err.retryable, false);
  });

  test('describe lists every version newest first across pages', async () => {
    server.state.seedSecret('s', {
      labels: LABELS,
      versions: [
        { data: 'a' },
        { data: 'b', state: 'DISABLED' },
        { data: 'c', state: 'DESTROYED' },
        { data: 'd' },
        { data: 'e' },
      ],
    });
    server.resetCalls();
    const description = await store.describe('s');
    assert.ok(description);
    assert.deepEqual(description.labels, LABELS);
    assert.deepEqual(
      description.versions.map((v) => `${v.version}:${v.state}`),
      ['5:ENABLED', '4:ENABLED', '3:DESTROYED', '2:DISABLED', '1:ENABLED'],
    );
    assert.equal(description.versions[0]?.path, 'projects/test-project/secrets/s/versions/5');
    // maxPageSize 2: three pages, so the store followed next_page_token.
    assert.equal(server.calls.ListSecretVersions, 3);
    assert.equal(server.calls.GetSecret, 1);
    assert.equal(await store.describe('missing'), undefined);
  });

  test('deleteSecret answers true, then false', async () => {
    server.state.seedSecret('s', { versions: [{ data: 'x' }] });
    assert.equal(await store.deleteSecret('s'), true);
    assert.equal(server.state.findSecret('s'), undefined);
    assert.equal(await store.deleteSecret('s'), false);
  });

  test('refuses a payload over 64 KiB and an invalid id before any call', async () => {
    await store.createSecret('s', LABELS);
    server.resetCalls();
    await rejectsWith(store.addVersion('s', Buffer.alloc(65_537)), 'PAYLOAD_TOO_LARGE');
    await rejectsWith(store.getSecret('bad/id'), 'IDENTIFIER_INVALID');
    await rejectsWith(store.createSecret('s2', { 'Bad-Key': 'x' }), 'IDENTIFIER_INVALID');
    assert.equal(server.totalCalls, 0);
    const max = await store.addVersion('s', Buffer.alloc(65_536, 1));
    assert.equal(max.version, '1');
  });

  test('a checksum mismatch on access is STORE_CORRUPT', async () => {
    const seeded = server.state.seedSecret('s', { versions: [{ data: 'payload' }] });
    const version = seeded.versions[0];
    assert.ok(version);
    version.crc32c ^= 1;
    await rejectsWith(store.accessLatestEnabled('s'), 'STORE_CORRUPT');
  });
});

describe('GCP store error classification over the wire', () => {
  const cases: { code: status; expected: string; retryable: boolean }[] = [
    { code: status.UNAVAILABLE, expected: 'STORE_UNAVAILABLE', retryable: true },
    { code: status.DEADLINE_EXCEEDED, expected: 'STORE_TIMEOUT', retryable: true },
    { code: status.RESOURCE_EXHAUSTED, expected: 'STORE_QUOTA_EXCEEDED', retryable: true },
    { code: status.INTERNAL, expected: 'STORE_INTERNAL', retryable: true },
    { code: status.UNKNOWN, expected: 'STORE_UNAVAILABLE', retryable: true },
    { code: status.ABORTED, expected: 'STORE_CONFLICT', retryable: true },
    { code: status.PERMISSION_DENIED, expected: 'STORE_PERMISSION_DENIED', retryable: false },
    { code: status.UNAUTHENTICATED, expected: 'STORE_UNAUTHENTICATED', retryable: false },
    { code: status.INVALID_ARGUMENT, expected: 'STORE_INVALID_REQUEST', retryable: false },
    { code: status.UNIMPLEMENTED, expected: 'STORE_FAILED', retryable: false },
  ];
  for (const { code, expected, retryable } of cases) {
    test(`${status[code]} → ${expected}, one call (no SDK retry)`, async () => {
      server.state.seedSecret('s', { versions: [{ data: 'x' }] });
      server.injectFault({ method: 'AccessSecretVersion', code });
      const err = await rejectsWith(store.accessLatestEnabled('s'), expected);
      assert.equal(err.retryable, retryable);
      assert.match(err.message, new RegExp(status[code]));
      assert.equal(server.calls.AccessSecretVersion, 1);
      assert.deepEqual(
        apiCalls.map((c) => `${c.method} ${c.code}`),
        [`AccessSecretVersion ${status[code]}`],
      );
    });
  }

  test('PERMISSION_DENIED names the operation and the IAM permission', async () => {
    server.state.seedSecret('s');
    server.setGrantedPermissions(['secretmanager.secrets.get', 'secretmanager.versions.access']);
    const err = await rejectsWith(store.addVersion('s', CANARY), 'STORE_PERMISSION_DENIED');
    assert.match(err.message, /AddSecretVersion/);
    assert.match(err.message, /secretmanager\.versions\.add/);
    assert.ok(await store.getSecret('s'));
    const denied = await rejectsWith(store.createSecret('other', LABELS), 'STORE_PERMISSION_DENIED');
    assert.match(denied.message, /secretmanager\.secrets\.create/);
  });

  test('UNAUTHENTICATED points at Workload Identity and ADC', async () => {
    server.injectFault({ method: 'GetSecret', code: status.UNAUTHENTICATED });
    const err = await rejectsWith(store.getSecret('s'), 'STORE_UNAUTHENTICATED');
    assert.match(err.message, /Workload Identity/);
    assert.match(err.message, /gcloud auth application-default login/);
  });

  test('a lost AddSecretVersion response: the write happened, the caller sees a retryable error', async () => {
    server.state.seedSecret('s');
    server.injectFault({ method: 'AddSecretVersion', code: status.UNAVAILABLE, afterApply: true });
    const err = await rejectsWith(store.addVersion('s', CANARY), 'STORE_UNAVAILABLE');
    assert.equal(err.retryable, true);
    assert.equal(server.state.versionsOf('s').length, 1);
    assert.equal(server.calls.AddSecretVersion, 1);
    // A blind retry duplicates the version: why the caller re-reads before adding again.
    await store.addVersion('s', CANARY);
    assert.deepEqual(
      server.state.versionsOf('s').map((v) => v.data?.equals(CANARY)),
      [true, true],
    );
  });

  test('errors of AddSecretVersion never repeat the server text, which could quote the payload', async () => {
    server.state.seedSecret('s');
    server.injectFault({
      method: 'AddSecretVersion',
      code: status.INVALID_ARGUMENT,
      message: `bad payload ${CANARY.toString()}`,
    });
    const err = await rejectsWith(store.addVersion('s', CANARY), 'STORE_INVALID_REQUEST');
    assert.ok(!err.message.includes('Y2FuYXJ5'), err.message);
    assert.ok(!err.message.includes('auths'), err.message);
  });

  test('a slow answer runs into the per-call deadline: STORE_TIMEOUT', async () => {
    server.state.seedSecret('s');
    server.injectFault({ method: 'GetSecret', delayMs: 500 });
    await rejectsWith(store.getSecret('s', { timeoutMs: 50 }), 'STORE_TIMEOUT');
    assert.deepEqual(
      apiCalls.map((c) => c.code),
      ['DEADLINE_EXCEEDED'],
    );
  });

  test('abort: before the call nothing is sent; during the call it is cancelled on the wire', async () => {
    server.state.seedSecret('s');
    const aborted = new AbortController();
    aborted.abort();
    await rejectsWith(store.getSecret('s', { signal: aborted.signal }), 'ABORTED');
    assert.equal(server.totalCalls, 0);

    server.injectFault({ method: 'GetSecret', delayMs: 300 });
    const controller = new AbortController();
    const pending = store.getSecret('s', { signal: controller.signal });
    while (server.calls.GetSecret === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    await rejectsWith(pending, 'ABORTED');
    assert.deepEqual(
      apiCalls.map((c) => `${c.method} ${c.code}`),
      ['GetSecret CANCELLED'],
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(server.callLog.at(-1)?.code, 'CANCELLED');
  });
});

describe('GCP store stays on loopback without credentials', () => {
  test('creating a store with the default (ADC, public endpoint) config makes no network call', async () => {
    const config = gcpStoreFactory.configSchema.parse({ projectId: 'some-project' });
    const defaultStore = await gcpStoreFactory.create(config);
    assert.equal(defaultStore.kind, 'gcp');
    assert.equal(defaultStore.location, 'projects/some-project');
    assert.equal(defaultStore.maxPayloadBytes, 65_536);
    assert.equal(defaultStore.secretPath('x'), 'projects/some-project/secrets/x');
    await defaultStore.close();
    await defaultStore.close();
    await rejectsWith(defaultStore.getSecret('x'), 'STORE_FAILED');
  });

  test('no connection left loopback, no ADC lookup, no authorization header', () => {
    assert.deepEqual(guard.offLoopback, []);
    assert.ok(guard.hosts.length > 0, 'the guard saw the gRPC connection');
    assert.equal(credentialLookups, 0);
  });

  test('no call carried credentials', async () => {
    await store.getSecret('s');
    assert.ok(server.callLog.length > 0);
    assert.ok(server.callLog.every((c) => !c.authorization));
  });

  test('the factory refuses plaintext to a non-loopback endpoint', async () => {
    const config = {
      projectId: 'test-project',
      endpoint: 'secretmanager.googleapis.com:443',
      insecure: true,
      callTimeoutMs: 1000,
    };
    await rejectsWith(gcpStoreFactory.create(config), 'CONFIG_INVALID');
  });
});
