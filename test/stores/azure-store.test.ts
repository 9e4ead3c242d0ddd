import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { managedLabels } from '../../src/pullsecret/identifiers.js';
import { pushSecret, type PushEvent } from '../../src/stores/push.js';
import type { SecretStore } from '../../src/stores/store.js';
import { baseEnv, finalLine, runCli } from '../support/cli.js';
import { CANARY_PULL_SECRET, findCanary, VALID_PULL_SECRET } from '../support/fixtures.js';
import { keyVaultStore } from '../support/store-harness.js';
import { startKeyVaultTestServer, type KeyVaultTestServer } from '../servers/azure-key-vault/index.js';

// The Azure Key Vault store through the real SDK and DefaultAzureCredential (workload identity
// against the loopback token endpoint), over HTTPS with a test CA: what the contract suite does not
// show (calls and writes per path, soft delete, throttling, in-process concurrency, leaks), and the job end to end.

const RETRY = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5 };
const changed = VALID_PULL_SECRET.replace('test@example.com', 'other@example.com');
let server: KeyVaultTestServer;
let store: SecretStore;
let n = 0;
let cluster: string;
let secretId: string;

before(async () => {
  server = await startKeyVaultTestServer();
  store = await keyVaultStore(server);
});
after(async () => {
  await store.close();
  await server.stop();
});
beforeEach(() => {
  server.clearFaults();
  cluster = `cls-akv-${++n}`;
  secretId = `hyperfleet-${cluster}-pull-secret`;
});

const push = (payload: string, events?: PushEvent[], on: SecretStore = store) =>
  pushSecret(
    on,
    { secretId, labels: managedLabels(cluster), payload: Buffer.from(payload) },
    { retry: RETRY, onEvent: (e) => events?.push(e) },
  );
const versionsOf = (name = secretId) =>
  (server.state.secrets.get(name)?.versions ?? []).filter((v) => v.contentType === 'application/json');

/** Calls and writes a step of work makes at the server. */
async function counted<T>(work: () => Promise<T>): Promise<{ value: T; calls: number; writes: number }> {
  const [calls, writes] = [server.totalCalls, server.writes];
  const value = await work();
  return { value, calls: server.totalCalls - calls, writes: server.writes - writes };
}

test('first run, no-op (one call, no write), changed content (one new version); tags and content type set', async () => {
  const first = await counted(() => push(VALID_PULL_SECRET));
  assert.equal(first.value.outcome, 'created');
  assert.equal(first.writes, 1, 'one SetSecret holding the pull secret makes the secret');
  assert.deepEqual(
    server.state.secrets.get(secretId)?.versions.map((v) => [v.contentType, v.enabled]),
    [['application/json', true]],
    'no disabled placeholder version',
  );
  assert.ok(first.calls <= 8, `first run made ${first.calls} calls`);
  const [version] = versionsOf();
  assert.deepEqual(version?.tags, managedLabels(cluster));
  assert.equal(version?.contentType, 'application/json');
  assert.equal(version?.value, VALID_PULL_SECRET, 'stored exactly as given');

  const noop = await counted(() => push(JSON.stringify(JSON.parse(VALID_PULL_SECRET), null, 2)));
  assert.deepEqual([noop.value.outcome, noop.calls, noop.writes], ['unchanged', 1, 0]);

  const update = await counted(() => push(changed));
  assert.deepEqual([update.value.outcome, update.writes], ['updated', 1]);
  assert.equal(versionsOf().length, 2);
  assert.deepEqual(versionsOf()[1]?.tags, managedLabels(cluster), 'tags carried over to the new version');
});

test('tags others put on our secret are kept on the next version', async () => {
  await push(VALID_PULL_SECRET);
  const current = versionsOf()[0];
  server.state.update(secretId, current?.id ?? '', {
    tags: { ...managedLabels(cluster), 'cost-center': 'cc-42' },
  });
  await push(changed);
  assert.equal(versionsOf()[1]?.tags?.['cost-center'], 'cc-42');
});

test('an unmanaged secret is refused before any write', async () => {
  server.state.seed(secretId, [{ value: 'foreign', tags: { owner: 'someone-else' } }]);
  const attempt = await counted(() => assert.rejects(push(VALID_PULL_SECRET), { code: 'SECRET_UNMANAGED' }));
  assert.equal(attempt.writes, 0);
});

test('a soft-deleted secret of ours is recovered, not recreated: its versions come back', async () => {
  const first = await push(VALID_PULL_SECRET);
  assert.equal(await store.deleteSecret(secretId), true);
  assert.equal(await store.getSecret(secretId), undefined, 'soft-deleted: not live');
  assert.ok(server.state.secrets.get(secretId)?.deleted !== undefined, 'soft delete only, never purged');
  const recovered = await counted(() => push(VALID_PULL_SECRET));
  assert.deepEqual([recovered.value.outcome, recovered.value.version], ['unchanged', first.version]);
  assert.equal(server.calls.get('RecoverDeletedSecret'), 1);
  assert.equal(server.state.secrets.get(secretId)?.deleted, undefined);

  await store.deleteSecret(secretId);
  const update = await push(changed);
  assert.equal(update.outcome, 'updated', 'recovered first, then the new content added on top');
  assert.equal(versionsOf().length, 2);
});

test('a soft-deleted foreign secret is refused with a clear error and left deleted', async () => {
  server.state.seed(secretId, [{ value: 'foreign', tags: { owner: 'someone-else' } }]);
  server.state.softDelete(secretId);
  const recoveries = server.calls.get('RecoverDeletedSecret');
  await assert.rejects(push(VALID_PULL_SECRET), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'SECRET_UNMANAGED');
    assert.match(err.message, /is soft-deleted in the vault and is not managed by HyperFleet/);
    return true;
  });
  assert.equal(server.calls.get('RecoverDeletedSecret'), recoveries);
  assert.ok(server.state.secrets.get(secretId)?.deleted !== undefined);
  // Another cluster's soft-deleted secret is not ours either.
  const other = `hyperfleet-${cluster}-b-pull-secret`;
  server.state.seed(other, [{ value: 'x', tags: managedLabels('cls-other') }]);
  server.state.softDelete(other);
  await assert.rejects(
    pushSecret(
      store,
      { secretId: other, labels: managedLabels(cluster), payload: Buffer.from(VALID_PULL_SECRET) },
      { retry: RETRY },
    ),
    { code: 'SECRET_UNMANAGED' },
  );
});

describe('faults', () => {
  for (const status of [500, 503]) {
    test(`${status} on every step, and a version whose answer was lost, end in one version`, async () => {
      for (const operation of ['GetSecret', 'GetSecretVersions', 'SetSecret'] as const)
        server.injectFault({ operation, status });
      server.injectFault({ operation: 'SetSecret', status, afterApply: true });
      const result = await push(VALID_PULL_SECRET);
      assert.equal(result.outcome, 'created');
      assert.equal(versionsOf().length, 1);
      assert.equal(versionsOf()[0]?.id, result.version);
    });
  }

  test('a connection reset after the write applied is not repeated', async () => {
    await push(VALID_PULL_SECRET);
    server.injectFault({ operation: 'SetSecret', drop: true, afterApply: true });
    const result = await push(changed);
    assert.equal(result.outcome, 'updated');
    assert.equal(versionsOf().length, 2);
  });

  test("429: the retry waits the server's Retry-After, not the shorter backoff", async () => {
    server.injectFault({ operation: 'GetSecret', status: 429, retryAfter: 1 });
    const events: PushEvent[] = [];
    const started = performance.now();
    const result = await push(VALID_PULL_SECRET, events);
    assert.equal(result.outcome, 'created');
    const retry = events.find((e) => e.message === 'Retrying after a transient error');
    assert.deepEqual([retry?.error_code, retry?.retry_in_ms], ['STORE_QUOTA_EXCEEDED', 1000]);
    assert.ok(performance.now() - started >= 990, 'the wait happened');
  });

  test('a call past its deadline is STORE_TIMEOUT (retryable); an aborted one ABORTED', async () => {
    const slow = await keyVaultStore(server, { callTimeoutMs: 150 });
    try {
      await slow.getSecret(secretId).catch(() => undefined); // the first call answers the auth challenge
      server.injectFault({ operation: 'GetSecret', delayMs: 1000 });
      await assert.rejects(
        slow.getSecret(secretId),
        (err: Error & { code?: string; retryable?: boolean }) => {
          assert.deepEqual([err.code, err.retryable], ['STORE_TIMEOUT', true]);
          assert.match(err.message, /did not finish within 150 ms \(AZURE_KEY_VAULT_CALL_TIMEOUT_MS\)/);
          return true;
        },
      );
      server.injectFault({ operation: 'GetSecret', delayMs: 1000 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      await assert.rejects(store.getSecret(secretId, { signal: controller.signal }), { code: 'ABORTED' });
    } finally {
      await slow.close();
    }
  });

  test('403 Forbidden is permanent and names the role to grant; 400 is permanent', async () => {
    server.injectFault({ operation: 'GetSecret', status: 403 });
    const before = server.totalCalls;
    await assert.rejects(push(VALID_PULL_SECRET), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'STORE_PERMISSION_DENIED');
      assert.match(
        err.message,
        /GetSecret failed for https:\/\/127\.0\.0\.1:\d+\/secrets\/hyperfleet-cls-akv-\d+-pull-secret: 403 Forbidden/,
      );
      assert.match(err.message, /az role assignment create --role "Key Vault Secrets Officer"/);
      return true;
    });
    assert.equal(server.totalCalls - before, 1);
    server.injectFault({ operation: 'GetSecret', status: 400 });
    await assert.rejects(push(VALID_PULL_SECRET), { code: 'STORE_INVALID_REQUEST' });
  });
});

test('concurrent writers in one process (one or two clients) with the same content make one version', async () => {
  const second = await keyVaultStore(server);
  try {
    const first = await Promise.all(
      [store, second, store, second, store].map((s) => push(VALID_PULL_SECRET, undefined, s)),
    );
    assert.equal(
      first.filter((r) => r.outcome === 'created').length,
      1,
      first.map((r) => r.outcome).join(','),
    );
    assert.equal(versionsOf().length, 1);
    const update = await Promise.all([store, second, store, second].map((s) => push(changed, undefined, s)));
    assert.deepEqual(update.map((r) => r.outcome).sort(), ['unchanged', 'unchanged', 'unchanged', 'updated']);
    assert.equal(versionsOf().length, 2);
  } finally {
    await second.close();
  }
});

test('up front, with no call: the 25 KB limit, UTF-8 only, Key Vault secret names', async () => {
  await push(VALID_PULL_SECRET);
  const before = server.totalCalls;
  await assert.rejects(store.addVersion(secretId, Buffer.alloc(25_001, 'x')), { code: 'PAYLOAD_TOO_LARGE' });
  await assert.rejects(store.addVersion(secretId, Buffer.from([0x7b, 0xff, 0x7d])), {
    code: 'PULL_SECRET_INVALID',
  });
  for (const bad of ['has_underscore', 'dot.ted', 'a'.repeat(128), '']) {
    await assert.rejects(store.getSecret(bad), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'IDENTIFIER_INVALID');
      assert.match(
        err.message,
        /Azure Key Vault secret names are 1-127 characters of letters, digits or "-"/,
      );
      return true;
    });
  }
  await assert.rejects(store.accessVersion(secretId, '2'), { code: 'IDENTIFIER_INVALID' });
  assert.equal(server.totalCalls, before);
  assert.ok(
    (await store.addVersion(secretId, Buffer.alloc(25_000, 'x'))).version.length === 32,
    'exactly the limit is accepted',
  );
});

test('a vault URL that is not Key Vault is refused before any client is built', async () => {
  const { azureStoreFactory } = await import('../../src/stores/azure-key-vault/index.js');
  for (const vaultUrl of [
    'http://127.0.0.1:1',
    'https://evil.example.com',
    'https://myvault.vault.azure.net/secrets',
    'https://user:pw@myvault.vault.azure.net',
  ]) {
    await assert.rejects(azureStoreFactory.create({ vaultUrl, callTimeoutMs: 1000, recoverPollMs: 10 }), {
      code: 'CONFIG_INVALID',
    });
  }
});

test('credentials the token endpoint refuses: STORE_UNAUTHENTICATED, permanent', async () => {
  const wrong = join(tmpdir(), `ps-akv-wrong-token-${process.pid}`);
  await writeFile(wrong, 'not-the-federated-token');
  const saved = process.env.AZURE_FEDERATED_TOKEN_FILE;
  process.env.AZURE_FEDERATED_TOKEN_FILE = wrong;
  const { azureStoreFactory } = await import('../../src/stores/azure-key-vault/index.js');
  const bad = await azureStoreFactory.create({
    vaultUrl: server.url,
    caFile: server.caFile,
    callTimeoutMs: 5000,
    recoverPollMs: 10,
  });
  process.env.AZURE_FEDERATED_TOKEN_FILE = saved;
  await assert.rejects(bad.getSecret(secretId), (err: Error & { code?: string; retryable?: boolean }) => {
    assert.equal(err.code, 'STORE_UNAUTHENTICATED');
    assert.equal(err.retryable, false);
    // The identity exists but its federation does not match: the provider's code, and advice about the federated credential.
    assert.match(
      err.message,
      /Microsoft Entra ID refused the credentials \(AADSTS70021\): the managed identity exists, but none of its federated credentials matches/,
    );
    assert.match(err.message, /az identity federated-credential list/);
    assert.doesNotMatch(err.message, /enable workload identity/);
    return true;
  });
});

test('an unknown client id keeps AADSTS700016 and points at the client id and tenant', async () => {
  const saved = process.env.AZURE_CLIENT_ID;
  process.env.AZURE_CLIENT_ID = '99999999-9999-4999-8999-999999999999';
  const { azureStoreFactory } = await import('../../src/stores/azure-key-vault/index.js');
  const bad = await azureStoreFactory.create({
    vaultUrl: server.url,
    caFile: server.caFile,
    callTimeoutMs: 5000,
    recoverPollMs: 10,
  });
  process.env.AZURE_CLIENT_ID = saved;
  await assert.rejects(bad.getSecret(secretId), (err: Error & { code?: string; retryable?: boolean }) => {
    assert.deepEqual([err.code, err.retryable], ['STORE_UNAUTHENTICATED', false]);
    assert.match(
      err.message,
      /\(AADSTS700016\): no application or managed identity with the client id AZURE_CLIENT_ID exists in the tenant AZURE_TENANT_ID/,
    );
    return true;
  });
});

test('an untrusted vault certificate is a configuration error, not retried, naming the CA file to set', async () => {
  const { azureStoreFactory } = await import('../../src/stores/azure-key-vault/index.js');
  const untrusting = await azureStoreFactory.create({
    vaultUrl: server.url,
    callTimeoutMs: 5000,
    recoverPollMs: 10,
  });
  const calls = server.totalCalls + server.challenges;
  await assert.rejects(
    push(VALID_PULL_SECRET, undefined, untrusting),
    (err: Error & { code?: string; retryable?: boolean }) => {
      assert.deepEqual([err.code, err.retryable], ['CONFIG_INVALID', false]);
      assert.match(
        err.message,
        /TLS trust failure \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|DEPTH_ZERO_SELF_SIGNED_CERT)\)/,
      );
      assert.match(
        err.message,
        /set AZURE_KEY_VAULT_CA_FILE \(adapter: store\.settings\.caFile\) to the PEM file of the CA/,
      );
      return true;
    },
  );
  assert.equal(server.totalCalls + server.challenges, calls, 'no request got through the TLS handshake');
});

test('leak canary: failed writes and their events never carry the pull secret', async () => {
  const events: PushEvent[] = [];
  server.injectFault({ operation: 'SetSecret', status: 503, times: 100 });
  let message = '';
  await assert.rejects(push(CANARY_PULL_SECRET, events), (err: Error) => {
    message = `${err.message} ${JSON.stringify(err)} ${String((err.cause as Error | undefined)?.message)}`;
    return true;
  });
  assert.equal(findCanary(`${message}\n${JSON.stringify(events)}`), undefined);
  const tooLarge = `${CANARY_PULL_SECRET.slice(0, -1)},"pad":"${'p'.repeat(26_000)}"}`;
  await assert.rejects(push(tooLarge), (err: Error) => findCanary(err.message) === undefined);
});

describe('run-job with SECRET_STORE=azure', () => {
  const env = (extra: Record<string, string> = {}) =>
    baseEnv({
      SECRET_STORE: 'azure',
      ...server.env(),
      CLUSTER_ID: cluster,
      PULL_SECRET_DATA: VALID_PULL_SECRET,
      ...extra,
    });

  test('first run, no-op, update through the CLI; the log names the vault; no canary leaks', async () => {
    const first = await runCli(['run-job', 'pull-secret'], env({ PULL_SECRET_DATA: CANARY_PULL_SECRET }));
    assert.equal(first.code, 0, first.stderr);
    assert.equal(finalLine(first)?.outcome, 'created');
    assert.equal(finalLine(first)?.azure_key_vault, server.url);
    assert.equal(findCanary(first.stdout + first.stderr), undefined);
    const calls = server.totalCalls;
    const again = await runCli(['run-job', 'pull-secret'], env({ PULL_SECRET_DATA: CANARY_PULL_SECRET }));
    assert.equal(again.code, 0, again.stderr);
    assert.equal(finalLine(again)?.outcome, 'unchanged');
    assert.equal(server.totalCalls - calls, 1, 'a no-op is one GetSecret');
    const update = await runCli(['run-job', 'pull-secret'], env());
    assert.equal(finalLine(update)?.outcome, 'updated', update.stderr);
    assert.match(
      String(finalLine(update)?.version),
      new RegExp(`^${server.url.replace(/\./g, '\\.')}/secrets/${secretId}/[0-9a-f]{32}$`),
    );
    assert.equal(versionsOf().length, 2);
  });

  test('AZURE_KEY_VAULT_URL alone selects the store; AZURE_CLIENT_ID alone does not; a bad URL is a usage error', async () => {
    const { SECRET_STORE: _unset, ...selected } = env();
    const byUrl = await runCli(['run-job', 'pull-secret'], selected);
    assert.equal(byUrl.code, 0, byUrl.stderr);
    const bad = await runCli(
      ['run-job', 'pull-secret'],
      env({ AZURE_KEY_VAULT_URL: 'https://evil.example.com' }),
    );
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /AZURE_KEY_VAULT_URL: must be the vault URL/);
    assert.doesNotMatch(bad.stderr, /evil/);
    const identityOnly = await runCli(
      ['validate-config'],
      baseEnv({ AZURE_CLIENT_ID: server.clientId, CLUSTER_ID: cluster, PULL_SECRET_DATA: VALID_PULL_SECRET }),
    );
    assert.doesNotMatch(identityOnly.stdout + identityOnly.stderr, /AZURE_KEY_VAULT_URL/);
  });

  test('preflight --store azure: two read-only calls prove get and list; Forbidden fails with the role assignment', async () => {
    const oid = '11111111-2222-3333-4444-555555555555';
    const [calls, writes] = [server.totalCalls, server.writes];
    const ok = await runCli(['preflight', '--vault-url', server.url, '--assignee', oid], env());
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /^PASS {2}secrets\/get +granted/m);
    assert.match(ok.stdout, /^PASS {2}secrets\/list +granted/m);
    assert.deepEqual([server.totalCalls - calls, server.writes - writes], [2, 0]);
    server.injectFault({ operation: 'GetSecret', status: 403 });
    const denied = await runCli(['preflight', '--store', 'azure', '--assignee', oid], env());
    assert.equal(denied.code, 1);
    assert.match(
      denied.stdout,
      new RegExp(
        `fix: az role assignment create --role "Key Vault Secrets Officer" --assignee ${oid} --scope /subscriptions/<subscription-id>/`,
      ),
    );
  });
});
