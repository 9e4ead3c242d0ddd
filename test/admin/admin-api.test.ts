import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { adminRequest, type AdminAnswer } from '../../src/admin/admin-client.js';
import { fileTokenStorage } from '../../src/admin/token-file.js';
import { TokenManager } from '../../src/admin/token-manager.js';
import { parseTokenState } from '../../src/admin/token-state.js';
import { CANARY_PULL_SECRET, findCanary } from '../support/fixtures.js';
import { startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { generateTestPki } from '../servers/kubernetes/tls.js';
import { baseEnv, runCli } from '../support/cli.js';
import { startAccountServiceStandIn } from '../../src/dev/account-service/index.js';

async function currentToken(file: string): Promise<string> {
  return parseTokenState(await readFile(file, 'utf8'), 'test').current.token;
}

function audits(logs: string[]): Array<Record<string, unknown>> {
  return logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.audit === true);
}

describe('admin API over plain HTTP on loopback', () => {
  let stack: AdapterStack;
  let tokenFile: string;
  let server: string;
  const get = (path: string, token?: string) => adminRequest({ server, method: 'GET', path, token });

  before(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ps-admin-'));
    tokenFile = join(dir, 'admin-tokens.json');
    stack = await startAdapterStack({
      admin: { enabled: true, host: '127.0.0.1', port: 0, tokens: { file: tokenFile } },
    });
    server = `http://127.0.0.1:${stack.adapter.admin.server?.port ?? 0}`;
  });
  after(() => stack.stop());

  it('refuses no token and a wrong one with 401 and WWW-Authenticate, and audits both', async () => {
    const before = audits(stack.logs).length;
    const none = await get('/clusters');
    assert.equal(none.status, 401);
    assert.equal(none.headers['www-authenticate'], 'Bearer realm="pull-secret-admin"');
    assert.equal(none.headers['content-type'], 'application/problem+json');
    const wrong = await get('/clusters', 'd3JvbmctdG9rZW4td3JvbmctdG9rZW4td3JvbmctdG9rZW4=');
    assert.equal(wrong.status, 401);
    assert.match(
      String(wrong.headers['www-authenticate']),
      /^Bearer realm="pull-secret-admin", error="invalid_token"$/,
    );
    const lines = audits(stack.logs).slice(before);
    assert.deepEqual(
      lines.map((l) => [l.token_slot, l.result, l.http_status]),
      [
        ['none', 'unauthenticated', 401],
        ['none', 'unauthenticated', 401],
      ],
    );
    assert.ok(
      !stack.logs.join('\n').includes('d3JvbmctdG9rZW4td3JvbmctdG9rZW4td3JvbmctdG9rZW4='),
      'a presented token never reaches a log',
    );
  });

  it('reads one cluster: store versions from describe, last conditions, Kubernetes Secret reference, never a payload', async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: CANARY_PULL_SECRET } });
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) =>
      s.conditions.some((c) => c.type === 'Available' && c.status === 'True'),
    );
    const answer = await get(`/clusters/${cluster.id}`, await currentToken(tokenFile));
    assert.equal(answer.status, 200);
    const view = answer.json as {
      id: string;
      state: string;
      store: { versions: Array<{ version: string; state: string }>; secretId: string };
      report: { applied: { status: string } };
      kubernetesSecret: { namespace: string; name: string };
    };
    assert.equal(view.id, cluster.id);
    assert.equal(view.state, 'healthy');
    assert.equal(view.store.secretId, `hyperfleet-${cluster.id}-pull-secret`);
    assert.deepEqual(
      view.store.versions.map((v) => [v.version, v.state]),
      [['1', 'ENABLED']],
    );
    assert.equal(view.report.applied.status, 'True');
    assert.deepEqual(view.kubernetesSecret, {
      namespace: `clusters-${cluster.id}`,
      name: `${cluster.id}-pull-secret`,
    });
    assert.equal(findCanary(JSON.stringify(answer.json)), undefined, 'no pull secret byte in the answer');
    const line = audits(stack.logs).at(-1);
    assert.deepEqual(
      [line?.action, line?.cluster_id, line?.token_slot, line?.result],
      ['get-cluster', cluster.id, 'current', 'ok'],
    );
  });

  it('lists clusters with a filter, and refuses an unknown filter', async () => {
    const token = await currentToken(tokenFile);
    const failing = await stack.seedCluster({ pullSecret: { data: '{"auths":{}}' } });
    await stack.publish(failing);
    await stack.waitForStatus(failing.id, (s) =>
      s.conditions.some((c) => c.type === 'Applied' && c.status === 'False'),
    );
    const failed = (await get('/clusters?filter=failed', token)).json as {
      items: Array<{ id: string; state: string }>;
    };
    assert.ok(failed.items.some((i) => i.id === failing.id));
    assert.ok(failed.items.every((i) => i.state === 'failed'));
    const healthy = (await get('/clusters?filter=healthy', token)).json as { items: Array<{ id: string }> };
    assert.ok(!healthy.items.some((i) => i.id === failing.id));
    const bad = await get('/clusters?filter=everything', token);
    assert.equal(bad.status, 400);
  });

  it('answers a hostile cluster id with 400 problem+json that does not echo it', async () => {
    const token = await currentToken(tokenFile);
    for (const id of [
      '..%2F..%2Fetc',
      'UPPER',
      'a'.repeat(200),
      '%E0%A4%A',
      'x%0Ay',
      'pullbot%3As3cr3t-canary-7Q2v%40quay.io',
    ]) {
      const answer = await get(`/clusters/${id}`, token);
      assert.equal(answer.status, 400, id);
      assert.equal(answer.headers['content-type'], 'application/problem+json');
      const problem = answer.json as { code: string; detail: string };
      assert.equal(problem.code, 'ADMIN-ID-001');
      assert.match(problem.detail, /cluster id/);
      assert.ok(!problem.detail.includes('s3cr3t'), 'never echoes the id');
    }
    assert.equal((await get('/clusters/missing-cluster', token)).status, 404);
    assert.equal((await get('/nothing', token)).status, 404);
  });

  it('says transfer-check is not available (404 problem), not faking it', async () => {
    const token = await currentToken(tokenFile);
    const cluster = await stack.seedCluster();
    for (const action of ['transfer-check']) {
      const answer = await adminRequest({
        server,
        method: 'POST',
        path: `/clusters/${cluster.id}/${action}`,
        token,
      });
      assert.equal(answer.status, 404);
      assert.equal((answer.json as { code: string }).code, 'ADMIN-NTF-002');
      assert.match((answer.json as { detail: string }).detail, /not available/);
      assert.equal(audits(stack.logs).at(-1)?.result, 'not-available');
    }
  });

  it('rolls back through the cluster slot: the previous content as a new version and the Kubernetes Secret; a destroyed version is a 409', async () => {
    const token = await currentToken(tokenFile);
    const cluster = await stack.seedCluster({ pullSecret: { data: CANARY_PULL_SECRET } });
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => s.data?.secretVersion === '1');
    const changed = CANARY_PULL_SECRET.replace(/canary@example\.com/g, 'ops@example.com');
    assert.equal(
      (
        await stack.request('PATCH', `/clusters/${cluster.id}`, {
          spec: { ...cluster.spec, pullSecret: { data: changed } },
        })
      ).status,
      200,
    );
    await stack.publish({ id: cluster.id, generation: 2 });
    await stack.waitForStatus(cluster.id, (s) => s.data?.secretVersion === '2');

    const post = (body?: Record<string, string>) =>
      adminRequest({
        server,
        method: 'POST',
        path: `/clusters/${cluster.id}/rollback`,
        token,
        ...(body === undefined ? {} : { body }),
      });
    const done = await post();
    assert.equal(done.status, 200, JSON.stringify(done.json));
    const view = done.json as Record<string, unknown>;
    assert.deepEqual(
      [view.fromVersion, view.restoredVersion, view.version, view.outcome],
      ['2', '1', '3', 'updated'],
    );
    assert.equal((view.kubernetesSecret as { outcome: string }).outcome, 'updated');
    assert.deepEqual(
      [audits(stack.logs).at(-1)?.action, audits(stack.logs).at(-1)?.result],
      ['rollback', 'ok'],
    );

    const { LocalStore } = await import('../../src/stores/local/index.js');
    const store = new LocalStore({ dir: join(stack.dir, 'store') });
    await store.destroyVersion(`hyperfleet-${cluster.id}-pull-secret`, '1');
    await store.close();
    const refused = await post({ toVersion: '1' });
    assert.equal(refused.status, 409);
    assert.equal((refused.json as { code: string }).code, 'ADMIN-RBK-001');
    assert.match(
      (refused.json as { detail: string }).detail,
      /^VERSION_DESTROYED: version 1 of .* is destroyed/,
    );
    assert.equal(audits(stack.logs).at(-1)?.result, 'refused');
    const bad = await fetch(`${server}/api/pullsecret/admin/v1/clusters/${cluster.id}/rollback`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: '{"toVersion":1}',
    });
    assert.equal(bad.status, 400);
    assert.equal(findCanary(JSON.stringify([done.json, refused.json]) + stack.logs.join('\n')), undefined);
  });

  it('bounds request bodies: a POST with more than 1 KiB is refused with 413', async () => {
    const token = await currentToken(tokenFile);
    const cluster = await stack.seedCluster();
    const response = await fetch(`${server}/api/pullsecret/admin/v1/clusters/${cluster.id}/reconcile`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: 'x'.repeat(5000),
    });
    assert.equal(response.status, 413);
    const params = await fetch(`${server}/api/pullsecret/admin/v1/clusters/${cluster.id}/reconcile`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: '{"force":true}',
    });
    assert.equal(params.status, 400);
  });

  it('reconciles through the per-cluster scheduler: an admin reconcile and an event for one cluster never run at once', async () => {
    const token = await currentToken(tokenFile);
    const cluster = await stack.seedCluster();
    stack.api.injectFault({ route: 'putStatus', clusterId: cluster.id, delayMs: 300, times: 2 });
    const logStart = stack.api.log.length;
    await stack.publish(cluster);
    // Wait until the event's run has read the cluster (it is running, not waiting to be replaced).
    while (
      !stack.api.log.slice(logStart).some((c) => c.route === 'getCluster' && c.path.includes(cluster.id))
    )
      await new Promise((r) => setTimeout(r, 5));
    const answer = await adminRequest({
      server,
      method: 'POST',
      path: `/clusters/${cluster.id}/reconcile`,
      token,
    });
    assert.equal(answer.status, 200);
    const outcome = answer.json as { result: string; state: string; report: { applied: { status: string } } };
    assert.equal(outcome.result, 'done');
    assert.equal(outcome.report.applied.status, 'True');
    // Answers in the order the stand-in sent them: each run is GET cluster … PUT status. Had the runs
    // overlapped, both delayed PUTs would finish back to back.
    const sequence = stack.api.log
      .slice(logStart)
      .filter((c) => c.path.includes(cluster.id) && (c.route === 'putStatus' || c.route === 'getCluster'))
      .map((c) => c.route);
    const puts = sequence.flatMap((route, i) => (route === 'putStatus' ? [i] : []));
    assert.equal(puts.length, 2, `two reconciles, each reported: ${sequence.join(',')}`);
    assert.ok(
      sequence.slice((puts[0] ?? 0) + 1, puts[1]).includes('getCluster'),
      `the second run read the cluster after the first reported: ${sequence.join(',')}`,
    );
    assert.deepEqual(
      [audits(stack.logs).at(-1)?.action, audits(stack.logs).at(-1)?.result],
      ['reconcile', 'ok'],
    );
  });

  it('takes the token another replica rotated without restart; the previous one works in its grace (slot audited)', async () => {
    const old = await currentToken(tokenFile);
    const other = new TokenManager({ storage: fileTokenStorage(tokenFile), pollMs: 0 });
    await other.start();
    await other.rotateNow();
    const fresh = await currentToken(tokenFile);
    assert.notEqual(fresh, old);
    await stack.adapter.admin.tokens?.refresh();
    assert.equal((await get('/clusters', fresh)).status, 200);
    assert.equal(audits(stack.logs).at(-1)?.token_slot, 'current');
    assert.equal((await get('/clusters', old)).status, 200);
    assert.equal(audits(stack.logs).at(-1)?.token_slot, 'previous');
    const text = stack.logs.join('\n');
    assert.ok(!text.includes(fresh) && !text.includes(old), 'no token in any log line');
    const metrics = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    assert.ok(!metrics.includes(fresh) && !metrics.includes(old), 'no token in the metrics');
  });
});

describe('admin API over TLS with a test CA, rate limiting, protected /metrics', () => {
  let stack: AdapterStack;
  let dir: string;
  let tokenFile: string;
  let ca: string;
  let server: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-admin-tls-'));
    const pki = await generateTestPki(dir);
    ca = pki.caPem;
    await writeFile(join(dir, 'tls.crt'), pki.certPem);
    await writeFile(join(dir, 'tls.key'), pki.keyPem);
    tokenFile = join(dir, 'admin-tokens.json');
    stack = await startAdapterStack({
      admin: {
        enabled: true,
        host: '127.0.0.1',
        port: 0,
        tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') },
        tokens: { file: tokenFile },
        failedAttempts: { max: 3, windowSeconds: 60 },
        protectMetrics: true,
      },
    });
    server = `https://127.0.0.1:${stack.adapter.admin.server?.port ?? 0}`;
  });
  after(async () => {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves HTTPS that verifies against the test CA, and fails clearly without it', async () => {
    const answer = await adminRequest({
      server,
      method: 'GET',
      path: '/clusters',
      token: await currentToken(tokenFile),
      ca,
    });
    assert.equal(answer.status, 200);
    await assert.rejects(
      adminRequest({ server, method: 'GET', path: '/clusters' }),
      /TLS failed .*--ca-file/,
    );
  });

  it('reloads the certificate files when asked (and on change) and keeps serving', async () => {
    const other = await generateTestPki(await mkdtemp(join(dir, 'pki2-')));
    await writeFile(join(dir, 'tls.crt'), other.certPem);
    await writeFile(join(dir, 'tls.key'), other.keyPem);
    assert.equal(stack.adapter.admin.server?.reloadTls(), true);
    const token = await currentToken(tokenFile);
    assert.equal(
      (await adminRequest({ server, method: 'GET', path: '/clusters', token, ca: other.caPem })).status,
      200,
    );
    await assert.rejects(adminRequest({ server, method: 'GET', path: '/clusters', token, ca }), /TLS failed/);
    ca = other.caPem;
  });

  it('protects /metrics with the same token', async () => {
    const url = `http://127.0.0.1:${stack.adapter.metricsPort}/metrics`;
    const refused = await fetch(url);
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer realm=/);
    const ok = await fetch(url, { headers: { authorization: `Bearer ${await currentToken(tokenFile)}` } });
    assert.equal(ok.status, 200);
    assert.match(await ok.text(), /pullsecret_/);
  });

  it('rate-limits failed attempts per client address with 429 and Retry-After', async () => {
    // The /metrics refusal above counted once: the limit is 3 per address and window.
    let answer: AdminAnswer | undefined;
    for (let i = 0; i < 4; i++)
      answer = await adminRequest({ server, method: 'GET', path: '/clusters', token: 'bm9wZQ==', ca });
    assert.equal(answer?.status, 429);
    assert.ok(Number(answer?.headers['retry-after']) >= 1);
    const good = await adminRequest({
      server,
      method: 'GET',
      path: '/clusters',
      token: await currentToken(tokenFile),
      ca,
    });
    assert.equal(
      good.status,
      429,
      'a blocked address is refused even with a valid token until its window ends',
    );
    assert.equal(audits(stack.logs).at(-1)?.result, 'rate-limited');
  });
});

describe('admin API transfer-check with an account service', () => {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  const CLOUD = b64('cluster-bot:cloud-token-admin-0001');
  const SPEC = JSON.stringify({
    auths: {
      'cloud.openshift.com': { auth: CLOUD },
      'quay.io': { auth: b64('old-owner:old-pw') },
      'registry.example.com': { auth: b64('mirror:pw') },
    },
  });
  /** The new owner's quay.io credential is the canary. */
  const TRANSFERRED = JSON.stringify({
    auths: { 'quay.io': { auth: 'cHVsbGJvdDpzM2NyM3QtY2FuYXJ5LTdRMnY=' } },
  });
  let stack: AdapterStack;
  let account: Awaited<ReturnType<typeof startAccountServiceStandIn>>;
  let dir: string;
  let tokenFile: string;
  let server: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-admin-transfer-'));
    tokenFile = join(dir, 'admin-tokens.json');
    account = await startAccountServiceStandIn();
    // A long interval: only the admin trigger checks here.
    stack = await startAdapterStack({
      admin: { enabled: true, host: '127.0.0.1', port: 0, tokens: { file: tokenFile } },
      accountService: { baseUrl: account.url, timeoutMs: 2000, transfer: { interval: '7d', jitter: 1 } },
    });
    server = `http://127.0.0.1:${stack.adapter.admin.server?.port ?? 0}`;
  });
  after(async () => {
    await stack.stop();
    await account.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs one check and apply through the scheduler and answers the decision, never a credential', async () => {
    const token = await currentToken(tokenFile);
    const cluster = await stack.seedCluster({ pullSecret: { data: SPEC } });
    account.setClusterToken(cluster.id, CLOUD);
    const post = () =>
      adminRequest({ server, method: 'POST', path: `/clusters/${cluster.id}/transfer-check`, token });

    const none = await post();
    assert.equal(none.status, 200);
    assert.deepEqual(none.json, {
      id: cluster.id,
      result: 'checked',
      outcome: 'none',
      reason: 'NoTransferOpen',
    });

    account.addTransfer({
      id: 'transfer-admin-1',
      clusterId: cluster.id,
      status: 'accepted',
      secret: TRANSFERRED,
    });
    const applied = await post();
    assert.equal(applied.status, 200);
    const body = applied.json as Record<string, unknown>;
    assert.equal(body.outcome, 'updated');
    assert.equal(body.reason, 'TransferApplied');
    assert.equal(body.transferId, 'transfer-admin-1');
    assert.deepEqual(body.replaced, ['quay.io']);
    assert.deepEqual(body.added, []);
    const status = await stack.waitForStatus(cluster.id, (s) => s.data?.transferId === 'transfer-admin-1');
    assert.equal(status.conditions.find((c) => c.type === 'Applied')?.reason, 'SecretCreated');

    const again = await post();
    assert.equal((again.json as { outcome: string }).outcome, 'unchanged');
    assert.equal(audits(stack.logs).at(-1)?.action, 'transfer-check');
    assert.equal(audits(stack.logs).at(-1)?.result, 'ok');

    account.injectFault({ route: 'transfers', status: 403 });
    const refused = await post();
    assert.equal((refused.json as { outcome: string }).outcome, 'refused');
    assert.match((refused.json as { message: string }).message, /answered 403/);

    const wrongMethod = await adminRequest({
      server,
      method: 'GET',
      path: `/clusters/${cluster.id}/transfer-check`,
      token,
    });
    assert.equal(wrongMethod.status, 405);
    assert.equal(
      (
        await adminRequest({
          server,
          method: 'POST',
          path: '/clusters/missing-cluster/transfer-check',
          token,
        })
      ).status,
      404,
    );

    const seen = JSON.stringify([none.json, applied.json, again.json, refused.json]) + stack.logs.join('\n');
    assert.equal(findCanary(seen), undefined, 'the transferred credential leaked');
    assert.ok(!seen.includes(CLOUD), 'the cluster token leaked');
  });

  it('pull-secret admin transfer-check prints the decision', async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: SPEC } });
    account.setClusterToken(cluster.id, CLOUD);
    account.addTransfer({
      id: 'transfer-admin-2',
      clusterId: cluster.id,
      status: 'accepted',
      secret: TRANSFERRED,
    });
    const done = await runCli(
      ['admin', 'transfer-check', cluster.id, '--server', server, '--token-file', tokenFile],
      baseEnv(),
    );
    assert.equal(done.code, 0, done.stderr);
    assert.match(
      done.stdout,
      new RegExp(`Transfer check of ${cluster.id}: checked \\(updated, TransferApplied\\)`),
    );
    assert.match(done.stdout, /Transfer: transfer-admin-2 applied at /);
    assert.match(done.stdout, /Replaced: quay\.io {2}Added: -/);
    assert.equal(findCanary(done.stdout + done.stderr), undefined);
  });
});
