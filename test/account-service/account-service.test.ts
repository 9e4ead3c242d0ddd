import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccountServiceClient, type AccountServiceClient } from '../../src/account-service/client.js';
import {
  applyTransfer,
  checkTransfer,
  type TransferDecision,
} from '../../src/account-service/transfer-check.js';
import {
  startAccountServiceStandIn,
  type AccountServiceStandIn,
} from '../../src/dev/account-service/index.js';
import { PullSecretError } from '../../src/errors/index.js';
import { canonicalize } from '../../src/pullsecret/canonical.js';
import { TOKEN_RECHECK_MS } from '../../src/hyperfleet/token-source.js';
import { generateTestPki } from '../servers/kubernetes/tls.js';
import { CANARY_NEEDLES, CANARY_PULL_SECRET } from '../support/fixtures.js';

// The account-service client and the transfer check over loopback HTTP against the stand-in
// (src/dev/account-service): the wire protocol, the AccessToken header, retries and faults.

const LIMITS = { maxBytes: 65_536, targetName: 'gcp store' };
const CLUSTER = '019466a0-1111-7000-8000-000000000001';
const OTHER_CLUSTER = '019466a0-2222-7000-8000-000000000002';
/** An assert.rejects check: a PullSecretError with `code` whose message matches `pattern`. */
const failsWith =
  (code: string, pattern = /./) =>
  (err: unknown) =>
    err instanceof PullSecretError && err.code === code && pattern.test(err.message);
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const CLOUD = b64('cluster-bot:cloud-token-abcdef');
const CURRENT = JSON.stringify({
  auths: {
    'cloud.openshift.com': { auth: CLOUD, email: 'old@example.com' },
    'quay.io': { auth: b64('old-owner:old-pw'), email: 'old@example.com' },
    'registry.example.com:5000': { auth: b64('mirror:mirror-pw') },
  },
});
const NEW_QUAY = b64('new-owner:new-pw');
const TRANSFERRED = JSON.stringify({ auths: { 'quay.io': { auth: NEW_QUAY } } });
/** Interval 240 ms: backoff 10, 20, 40, 80, 160 ms, real timers. */
const INTERVAL = 240;

let service: AccountServiceStandIn;
let client: AccountServiceClient;

before(async () => {
  service = await startAccountServiceStandIn();
  client = createAccountServiceClient({ baseUrl: service.url, timeoutMs: 2000 });
});
after(() => service.stop());
beforeEach(() => {
  service.clearFaults();
  service.clearTransfers(CLUSTER);
  service.resetCalls();
  service.setClusterToken(CLUSTER, CLOUD);
});

const check = (
  current = CURRENT,
  onRetry?: (info: { attempt: number; delayMs: number; error: PullSecretError }) => void,
) => checkTransfer(CLUSTER, Buffer.from(current), { client, intervalMs: INTERVAL, limits: LIMITS, onRetry });
const accept = (secret = TRANSFERRED, id = 'transfer-1') =>
  service.addTransfer({ id, clusterId: CLUSTER, status: 'accepted', secret });

describe('transfer check against the account-service stand-in', () => {
  it('an accepted transfer is decided as an update with the merged content, and applied once', async () => {
    service.addTransfer({ id: 'old', clusterId: CLUSTER, status: 'completed', secret: '{}' });
    accept();
    const decision = await check();
    assert.equal(decision.kind, 'update');
    if (decision.kind !== 'update') return;
    assert.equal(decision.transferId, 'transfer-1');
    assert.deepEqual(decision.replaced, ['quay.io']);
    const expected = JSON.parse(CURRENT) as { auths: Record<string, Record<string, string>> };
    expected.auths['quay.io'] = { auth: NEW_QUAY, email: 'old@example.com' };
    assert.equal(decision.data.toString('utf8'), canonicalize(expected));
    const written: Buffer[] = [];
    const outcome = await applyTransfer(decision, (data) => Promise.resolve(void written.push(data)));
    assert.equal(outcome.kind, 'updated');
    assert.deepEqual(written, [decision.data]);
    // Checked again with the applied content: nothing more to write.
    assert.equal((await check(decision.data.toString('utf8'))).kind, 'unchanged');
    assert.equal(service.calls.transfers, 2);
  });

  it('no transfer open: an empty list, an empty body and 204 all mean none', async () => {
    assert.equal((await check()).kind, 'none');
    accept();
    service.injectFault({ route: 'transfers', emptyBody: true });
    assert.equal((await check()).kind, 'none');
    service.injectFault({ route: 'transfers', status: 204 });
    assert.equal((await check()).kind, 'none');
  });

  it('500 then recovery: retried with the backoff, then decided', async () => {
    accept();
    service.injectFault({ route: 'transfers', status: 500, times: 2 });
    const retries: number[] = [];
    const decision = await check(CURRENT, ({ delayMs }) => retries.push(delayMs));
    assert.equal(decision.kind, 'update');
    assert.deepEqual(retries, [10, 20]);
    assert.equal(service.calls.transfers, 3);
  });

  it('500 until the backoff runs out: unreachable (Degraded), after 1 + 5 attempts', async () => {
    accept();
    service.injectFault({ route: 'transfers', status: 503, times: Infinity });
    const decision = await check();
    assert.equal(decision.kind, 'unreachable');
    assert.equal(decision.kind === 'unreachable' && decision.error.code, 'ACCOUNT_SERVICE_UNAVAILABLE');
    assert.equal(service.calls.transfers, 6);
  });

  it('a closed port is unreachable too', async () => {
    const gone = await startAccountServiceStandIn();
    await gone.stop();
    const offline = createAccountServiceClient({ baseUrl: gone.url, timeoutMs: 500 });
    const decision = await checkTransfer(CLUSTER, Buffer.from(CURRENT), {
      client: offline,
      intervalMs: 24,
      limits: LIMITS,
    });
    assert.equal(decision.kind, 'unreachable');
    assert.match(decision.kind === 'unreachable' ? decision.message : '', /cannot reach the account service/);
  });

  it('two accepted transfers: nothing to write, both ids reported', async () => {
    accept();
    accept(TRANSFERRED, 'transfer-2');
    const decision = await check();
    assert.equal(decision.kind, 'multiple');
    assert.deepEqual(decision.kind === 'multiple' && decision.transferIds, ['transfer-1', 'transfer-2']);
    service.clearTransfers(CLUSTER);
    accept();
    service.injectFault({ route: 'transfers', duplicate: true });
    assert.equal((await check()).kind, 'multiple');
  });

  it('an empty secret, or one that fails the merge, is corrupted: nothing to write', async () => {
    accept();
    service.injectFault({ route: 'transfers', emptySecret: true });
    const empty = await check();
    assert.deepEqual(
      [empty.kind, empty.kind === 'corrupted' && empty.transferId],
      ['corrupted', 'transfer-1'],
    );
    service.clearTransfers(CLUSTER);
    accept(JSON.stringify({ auths: { 'quay.io': { auth: b64('no-colon') } } }));
    assert.equal((await check()).kind, 'corrupted');
  });

  it('a non-JSON body is unexpected, not retried', async () => {
    accept();
    service.injectFault({ route: 'transfers', body: '<html>proxy error</html>' });
    const html = await check();
    assert.equal(html.kind, 'unexpected');
    assert.equal(html.kind === 'unexpected' && html.error.code, 'ACCOUNT_SERVICE_UNEXPECTED');
    service.injectFault({ route: 'transfers', body: '{"items": [', contentType: 'application/json' });
    assert.equal((await check()).kind, 'unexpected');
    service.injectFault({ route: 'transfers', body: '{"items": "nope"}', contentType: 'application/json' });
    assert.equal((await check()).kind, 'unexpected');
    assert.equal(service.calls.transfers, 3);
  });

  it('403 is refused, not retried, and the reason names the status', async () => {
    accept();
    service.injectFault({ route: 'transfers', status: 403, times: Infinity });
    const decision = await check();
    assert.equal(decision.kind, 'refused');
    assert.match(decision.kind === 'refused' ? decision.message : '', /answered 403/);
    assert.equal(service.calls.transfers, 1);
  });

  it('the stand-in checks the AccessToken: a wrong token is refused with 403', async () => {
    accept();
    service.setClusterToken(CLUSTER, b64('someone:else'));
    const decision = await check();
    assert.equal(decision.kind, 'refused');
    assert.match(decision.kind === 'refused' ? decision.message : '', /403/);
  });

  it('without a cloud.openshift.com entry the cluster does not ask', async () => {
    const decision = await check(JSON.stringify({ auths: { 'quay.io': { auth: b64('a:bcdef') } } }));
    assert.equal(decision.kind, 'no-token');
    assert.equal(service.calls.transfers, 0);
  });
});

describe('pull secret source against the stand-in', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-account-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('asks POST pull_secrets with the token file (re-read on change), over https with a private CA', async () => {
    const pki = await generateTestPki(dir);
    const caFile = join(dir, 'ca.pem');
    const tokenFile = join(dir, 'token');
    await writeFile(caFile, pki.caPem);
    await writeFile(tokenFile, 'token-one-aaaaaa\n');
    const secure = await startAccountServiceStandIn({
      tokens: ['token-one-aaaaaa'],
      tls: { certPem: pki.certPem, keyPem: pki.keyPem },
    });
    try {
      secure.setResourcePullSecret(CLUSTER, CURRENT);
      const https = createAccountServiceClient({ baseUrl: secure.url, tokenFile, caFile });
      assert.equal((await https.source(CLUSTER)).toString('utf8'), CURRENT);
      // Another cluster: OCM creates its credentials on the first request.
      assert.equal(
        (await https.source(OTHER_CLUSTER)).toString('utf8'),
        secure.resourcePullSecret(OTHER_CLUSTER),
      );
      await writeFile(tokenFile, 'token-two-bbbbbbbb\n');
      // The file is looked at again once the re-check interval has passed.
      await sleep(TOKEN_RECHECK_MS + 100);
      await assert.rejects(
        https.source(CLUSTER),
        failsWith('ACCOUNT_SERVICE_REFUSED', /403 .*\(ACCT-MGMT-11\)/),
      );
      const untrusted = createAccountServiceClient({ baseUrl: secure.url, tokenFile });
      await assert.rejects(untrusted.source(CLUSTER), failsWith('CONFIG_INVALID', /accountService\.caFile/));
    } finally {
      await secure.stop();
    }
  });

  it('5xx is ACCOUNT_SERVICE_UNAVAILABLE (retryable); an invalid cluster id never reaches the wire', async () => {
    service.setResourcePullSecret(CLUSTER, CURRENT);
    service.injectFault({ route: 'pullSecrets', status: 502 });
    const unavailable = failsWith('ACCOUNT_SERVICE_UNAVAILABLE');
    await assert.rejects(
      client.source(CLUSTER),
      (err: unknown) => unavailable(err) && (err as PullSecretError).retryable,
    );
    await assert.rejects(client.source('../x'), failsWith('IDENTIFIER_INVALID'));
    assert.equal(service.calls.pullSecrets, 1);
  });
});

describe('the stand-in serves the routes OCM has, as OCM answers them', () => {
  const post = (path: string, body?: unknown) => {
    const headers = { 'content-type': 'application/json' };
    const text = body === undefined ? undefined : JSON.stringify(body);
    return fetch(`${service.url}${path}`, { method: 'POST', headers, body: text });
  };

  it('no organization pull secret route: 404 with an OCM error body', async () => {
    const res = await fetch(`${service.url}/api/accounts_mgmt/v1/organizations/org-1/pull_secret`);
    assert.equal(res.status, 404);
    const body = (await res.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['code', 'href', 'id', 'kind', 'operation_id', 'reason']);
    assert.equal(body.kind, 'Error');
    assert.equal(body.code, 'ACCT-MGMT-7');
    assert.equal(body.id, '7');
    assert.equal(body.href, '/api/accounts_mgmt/v1/errors/7');
  });

  it('access_token and pull_secrets answer 201 {auths}; pull_secrets needs external_resource_id', async () => {
    const own = await post('/api/accounts_mgmt/v1/access_token');
    assert.equal(own.status, 201);
    assert.ok(Object.keys(((await own.json()) as { auths: object }).auths).includes('cloud.openshift.com'));
    const first = await post('/api/accounts_mgmt/v1/pull_secrets', { external_resource_id: OTHER_CLUSTER });
    assert.equal(first.status, 201);
    const again = await post('/api/accounts_mgmt/v1/pull_secrets', { external_resource_id: OTHER_CLUSTER });
    assert.deepEqual(await again.json(), await first.json());
    const missing = await post('/api/accounts_mgmt/v1/pull_secrets', {});
    assert.equal(missing.status, 400);
    assert.equal(((await missing.json()) as { kind: string }).kind, 'Error');
  });

  it('a configured bearer token is required: none 401 ACCOUNTS-MGMT-401, a foreign one 403 ACCT-MGMT-11', async () => {
    const guarded = await startAccountServiceStandIn({ tokens: ['operator-token-1'] });
    try {
      const url = `${guarded.url}/api/accounts_mgmt/v1/access_token`;
      const none = await fetch(url, { method: 'POST' });
      assert.equal(none.status, 401);
      assert.equal(((await none.json()) as { code: string }).code, 'ACCOUNTS-MGMT-401');
      const foreign = await fetch(url, { method: 'POST', headers: { authorization: 'Bearer someone-else' } });
      assert.equal(foreign.status, 403);
      assert.equal(((await foreign.json()) as { code: string }).code, 'ACCT-MGMT-11');
    } finally {
      await guarded.stop();
    }
  });
});

describe('leak canary: the cluster token and the transferred pull secret', () => {
  const NEW_OWNER = 'newowner:n3w-0wn3r-canary-9Xk';
  const transferredNeedles = [b64(NEW_OWNER), NEW_OWNER, 'n3w-0wn3r-canary-9Xk'];
  const canaryCloud =
    (JSON.parse(CANARY_PULL_SECRET) as { auths: Record<string, { auth: string }> }).auths[
      'cloud.openshift.com'
    ]?.auth ?? '';

  /** Everything a decision would put in a log, a status or a metric: all but the bytes to write. */
  function visible(decision: TransferDecision, logged: string[]): string {
    const { ...shown } = decision as Record<string, unknown>;
    // The payloads an `update` carries to the writer (merged and transferred pull secrets) are credentials by contract.
    delete shown.data;
    delete shown.transferred;
    const error = shown.error as PullSecretError | undefined;
    return [JSON.stringify(shown), error?.message ?? '', error?.stack ?? '', ...logged].join('\n');
  }

  it('no decision, error or retry log holds the token, the AccessToken header or the transferred secret', async () => {
    service.setClusterToken(CLUSTER, canaryCloud);
    const secrets = [
      JSON.stringify({ auths: { 'quay.io': { auth: b64(NEW_OWNER) } } }),
      JSON.stringify({ auths: { 'quay.io': { auth: `${b64(NEW_OWNER)}!` } } }),
      `{"auths":{"quay.io":{"auth":"${b64(NEW_OWNER)}"}`,
    ];
    const faults = [
      {},
      { status: 500, times: Infinity },
      { status: 403 },
      { body: `<html>${CANARY_PULL_SECRET}</html>` },
      { emptySecret: true },
      { duplicate: true },
    ];
    let seen = '';
    for (const secret of secrets) {
      for (const fault of faults) {
        service.clearFaults();
        service.clearTransfers(CLUSTER);
        accept(secret);
        if (Object.keys(fault).length > 0) service.injectFault({ route: 'transfers', ...fault });
        const logged: string[] = [];
        const decision = await checkTransfer(CLUSTER, Buffer.from(CANARY_PULL_SECRET), {
          client,
          intervalMs: 24,
          limits: LIMITS,
          onRetry: (info) => logged.push(JSON.stringify({ ...info, error: info.error.message })),
        });
        seen += `${decision.kind} `;
        const text = visible(decision, logged);
        for (const needle of [
          ...CANARY_NEEDLES,
          canaryCloud,
          `AccessToken ${CLUSTER}:`,
          ...transferredNeedles,
        ]) {
          assert.ok(!text.includes(needle), `${decision.kind} shows a credential (${needle.length} chars)`);
        }
      }
    }
    // The flows covered what they should.
    for (const kind of ['update', 'unreachable', 'refused', 'unexpected', 'corrupted', 'multiple'])
      assert.ok(seen.includes(kind), `${kind} not covered: ${seen}`);
  });
});
