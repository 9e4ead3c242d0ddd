import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, afterEach, before, describe, it } from 'node:test';
import { startHyperFleetApiStandIn, type HyperFleetApiStandIn } from '../../src/dev/hyperfleet-api/index.js';
import { PullSecretError } from '../../src/errors/index.js';
import { createLogger } from '../../src/observability/logger.js';
import {
  createHyperFleetClient,
  type AdapterStatusReport,
  type Cluster,
  type HyperFleetClientOptions,
} from '../../src/hyperfleet/index.js';
import { TOKEN_RECHECK_MS } from '../../src/hyperfleet/token-source.js';
import { generateTestPki } from '../servers/kubernetes/tls.js';
import { jsonFixture } from '../support/fixtures.js';

const run = promisify(execFile);
const FAST = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 };
const TOKEN_A = 'token-aaaaaaaaaaaa';
const TOKEN_B = 'token-bbbbbbbbbbbb';
const GONE_ID = '019466a0-0000-7000-8000-000000000000';

function isCode(code: string, pattern?: RegExp) {
  return (err: unknown) =>
    err instanceof PullSecretError &&
    err.code === code &&
    (pattern === undefined || pattern.test(err.message));
}

function report(generation: number, overrides: Partial<AdapterStatusReport> = {}): AdapterStatusReport {
  return {
    adapter: 'pullsecret',
    observed_generation: generation,
    observed_time: new Date().toISOString(),
    conditions: [
      { type: 'Applied', status: 'True', reason: 'SecretCreated' },
      { type: 'Available', status: 'True', reason: 'SecretAvailable' },
      { type: 'Health', status: 'True', reason: 'Healthy' },
    ],
    data: { secretName: 'hyperfleet-x-pull-secret', version: '1' },
    ...overrides,
  };
}

describe('HyperFleet client against the API stand-in', () => {
  let api: HyperFleetApiStandIn;
  let dir: string;
  let tokenFile: string;
  let seeded: Cluster;
  const logLines: string[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: { write: (line: string) => void logLines.push(line) },
  });
  const client = (overrides: Partial<HyperFleetClientOptions> = {}) =>
    createHyperFleetClient({
      baseUrl: api.url,
      tokenFile,
      retry: FAST,
      timeoutMs: 2_000,
      logger,
      ...overrides,
    });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hf-client-'));
    tokenFile = join(dir, 'token');
    await writeFile(tokenFile, `${TOKEN_A}\n`);
    api = await startHyperFleetApiStandIn({ tokens: [TOKEN_A] });
  });

  afterEach(async () => {
    api.clearFaults();
    api.setTokens([TOKEN_A]);
    await writeFile(tokenFile, `${TOKEN_A}\n`);
    await utimes(tokenFile, new Date(), new Date(Date.now() + 1_000));
  });

  after(async () => {
    assert.deepEqual(api.violations, [], 'every answer matched the contract');
    assert.ok(!logLines.some((l) => l.includes(TOKEN_A) || l.includes(TOKEN_B)), 'no token in the logs');
    await api.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('gets a cluster seeded from the shared fixture', async () => {
    seeded = await api.seedCluster(jsonFixture<Cluster>('clusters/gcp-cluster.json'));
    const cluster = await client().getCluster(seeded.id);
    assert.equal(cluster?.id, '019466a0-8f8e-7abc-9def-0123456789ab');
    assert.equal(cluster.generation, 2);
    assert.equal((cluster.spec.gcp as { projectId: string }).projectId, 'customer-prod-12345');
    assert.equal(cluster.status.conditions.find((c) => c.type === 'DnsSuccessful')?.status, 'True');
    assert.equal(api.log.at(-1)?.authorization, true);
  });

  it('a missing cluster is undefined, with one request', async () => {
    api.resetCalls();
    assert.equal(await client().getCluster(GONE_ID), undefined);
    assert.equal(api.calls.getCluster, 1);
  });

  it('putStatus: 201 stored, 204 stale, 404 gone', async () => {
    const c = client();
    assert.equal(await c.putStatus(seeded.id, report(2)), 'stored');
    assert.equal(await c.putStatus(seeded.id, report(1)), 'stale');
    assert.equal(api.log.at(-1)?.discarded, 'stale-generation');
    assert.equal(await c.putStatus(GONE_ID, report(1)), 'gone');
    const stored = api.listStatuses(seeded.id);
    assert.deepEqual(
      stored.map((s) => [s.adapter, s.observed_generation]),
      [['pullsecret', 2]],
    );
    assert.equal(
      (await c.getCluster(seeded.id))?.status.conditions.find((x) => x.type === 'Reconciled')?.status,
      'True',
    );
  });

  it('retries 503 and succeeds', async () => {
    api.injectFault({ route: 'getCluster', status: 503, times: 2 });
    api.resetCalls();
    assert.equal((await client().getCluster(seeded.id))?.id, seeded.id);
    assert.equal(api.calls.getCluster, 3);
  });

  it('retries a lost answer to a PUT; the repeated report is stored again', async () => {
    api.injectFault({ route: 'putStatus', status: 502, afterApply: true });
    api.resetCalls();
    assert.equal(await client().putStatus(seeded.id, report(2)), 'stored');
    assert.deepEqual(
      api.log.map((l) => l.status),
      [502, 201],
    );
  });

  it('retries a reset connection and a 429 with Retry-After', async () => {
    api.injectFault({ route: 'getCluster', reset: true });
    api.injectFault({ route: 'getCluster', status: 429, retryAfter: '0' });
    api.resetCalls();
    assert.ok(await client().getCluster(seeded.id));
    assert.equal(api.calls.getCluster, 3);
  });

  it('gives up after the retry budget with API_UNAVAILABLE', async () => {
    api.injectFault({ route: 'getCluster', status: 500, times: Infinity });
    api.resetCalls();
    await assert.rejects(client().getCluster(seeded.id), isCode('API_UNAVAILABLE', /500/));
    assert.equal(api.calls.getCluster, FAST.maxAttempts);
  });

  it('does not retry a 400, and reports the problem details', async () => {
    api.resetCalls();
    const old = report(2, { observed_time: new Date(Date.now() - 2 * 3_600_000).toISOString() });
    await assert.rejects(
      client().putStatus(seeded.id, old),
      isCode(
        'API_REQUEST_INVALID',
        /Validation Failed: observed_time must not be more than 30m0s in the past \(HYPERFLEET-VAL-000\)/,
      ),
    );
    assert.equal(api.calls.putStatus, 1);
  });

  it('HYPERFLEET-NTF-000 (wrong base URL) is a configuration error', async () => {
    api.resetCalls();
    const wrong = client({ baseUrl: `${api.url}/hyperfleet` });
    await assert.rejects(wrong.getCluster(seeded.id), isCode('CONFIG_INVALID', /base URL looks wrong/));
    await assert.rejects(wrong.putStatus(seeded.id, report(2)), isCode('CONFIG_INVALID'));
    assert.equal(api.calls.unmatched, 2);
  });

  it('401 is API_UNAUTHENTICATED naming the token file, never the token', async () => {
    api.setTokens([TOKEN_B]);
    api.resetCalls();
    await assert.rejects(client().getCluster(seeded.id), (err: unknown) => {
      assert.ok(isCode('API_UNAUTHENTICATED')(err));
      const message = (err as Error).message;
      assert.ok(message.includes(tokenFile));
      assert.ok(!message.includes(TOKEN_A));
      return true;
    });
    assert.equal(api.calls.getCluster, 1);
  });

  it('re-reads the token file after a 401 at once, after a rotation within the re-check interval', async () => {
    const c = client();
    assert.ok(await c.getCluster(seeded.id));
    // Rotated on the server and in the file at once: the cached token is still sent.
    api.setTokens([TOKEN_B]);
    await writeFile(tokenFile, `${TOKEN_B}\n`);
    await assert.rejects(c.getCluster(seeded.id), isCode('API_UNAUTHENTICATED'));
    // The 401 dropped the cache.
    assert.ok(await c.getCluster(seeded.id));
    // Rotated in the file first, as a re-mounted Secret does: sent once the interval has passed.
    await writeFile(tokenFile, `${TOKEN_A}\n`);
    await sleep(TOKEN_RECHECK_MS + 100);
    api.setTokens([TOKEN_A]);
    assert.ok(await c.getCluster(seeded.id));
  });

  it('times out a hanging answer, retries, and gives up', async () => {
    api.injectFault({ route: 'getCluster', hang: true, times: 2 });
    api.resetCalls();
    await assert.rejects(
      client({ timeoutMs: 150, retry: { ...FAST, maxAttempts: 2 } }).getCluster(seeded.id),
      isCode('API_UNAVAILABLE', /within 150 ms/),
    );
    assert.equal(api.calls.getCluster, 2);
    api.injectFault({ route: 'getCluster', hang: true });
    assert.ok(await client({ timeoutMs: 150 }).getCluster(seeded.id));
  });

  it("the caller's abort ends a hanging request at once", async () => {
    api.injectFault({ route: 'getCluster', hang: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(client().getCluster(seeded.id, { signal: controller.signal }), isCode('ABORTED'));
  });

  it('refuses hostile ids without a request', async () => {
    api.resetCalls();
    const c = client();
    for (const id of ['..', '../clusters', 'a/b', '%2F', `${seeded.id}/statuses`, '']) {
      await assert.rejects(c.getCluster(id), isCode('IDENTIFIER_INVALID'), id);
      await assert.rejects(c.putStatus(id, report(1)), isCode('IDENTIFIER_INVALID'), id);
    }
    assert.equal(api.log.length, 0);
  });

  it("lists a cluster's adapter statuses; a missing cluster has none", async () => {
    await client().putStatus(seeded.id, report(seeded.generation));
    const statuses = await client().listStatuses(seeded.id, { page: 1, size: 10 });
    assert.equal(
      statuses?.items.find((s) => s.adapter === 'pullsecret')?.observed_generation,
      seeded.generation,
    );
    assert.equal(await client().listStatuses(GONE_ID), undefined);
    await assert.rejects(client().listStatuses(seeded.id, { size: 0 }), isCode('CONFIG_INVALID'));
  });

  it('lists clusters a page at a time', async () => {
    const page = await client().listClusters({ page: 1, size: 10 });
    assert.equal(page.total, 1);
    assert.equal(page.items[0]?.id, seeded.id);
    assert.equal((await client().listClusters({ page: 2, size: 10 })).items.length, 0);
  });
});

describe('HyperFleet client: walking the cluster list', () => {
  let api: HyperFleetApiStandIn;
  before(async () => {
    api = await startHyperFleetApiStandIn();
  });
  after(() => api.stop());

  // hyperfleet-api lists newest first by default (pkg/services/types.go `NewListArguments`), so a walk
  // in the default order sees a cluster created mid-walk push the last one seen onto the next page.
  it('pages in creation order: a cluster created mid-walk neither repeats one nor hides one', async () => {
    const client = createHyperFleetClient({ baseUrl: api.url, retry: FAST, timeoutMs: 2_000 });
    const seed = (minute: number) =>
      api.seedCluster({ spec: { provider: 'gcp' }, created_time: `2026-01-01T00:0${minute}:00.000Z` });
    const first = [await seed(1), await seed(2), await seed(3)].map((c) => c.id);
    const page1 = await client.listClusters({ page: 1, size: 2 });
    const late = await seed(4);
    const page2 = await client.listClusters({ page: 2, size: 2 });
    const walked = [...page1.items, ...page2.items].map((c) => c.id);
    assert.deepEqual(walked, [...first, late.id]);
  });

  it('refuses a page size above the API maximum of 100 before asking', async () => {
    const client = createHyperFleetClient({ baseUrl: api.url, retry: FAST, timeoutMs: 2_000 });
    api.resetCalls();
    await assert.rejects(client.listClusters({ size: 101 }), isCode('CONFIG_INVALID', /size must be 1-100/));
    assert.equal(api.calls.listClusters, 0);
    assert.equal((await client.listClusters({ size: 100 })).total, 4);
  });
});

describe('HyperFleet client over https', () => {
  let dir: string;
  let caFile: string;
  let server: HttpsServer;
  let url: string;
  let tcpConnections = 0;
  let tlsConnections = 0;
  const EMPTY_PAGE = JSON.stringify({ page: 1, size: 0, total: 0, items: [] });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hf-https-'));
    const pki = await generateTestPki(dir);
    caFile = join(dir, 'api-ca.pem');
    await writeFile(caFile, pki.caPem);
    server = createHttpsServer({ key: pki.keyPem, cert: pki.certPem }, (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(EMPTY_PAGE),
    );
    server.on('connection', () => tcpConnections++);
    server.on('secureConnection', () => tlsConnections++);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    server.closeAllConnections();
    server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('trusts a private CA through caFile, over kept-alive connections', async () => {
    const client = createHyperFleetClient({ baseUrl: url, caFile, retry: FAST });
    const before = tlsConnections;
    for (let i = 0; i < 6; i++) assert.equal((await client.listClusters()).total, 0);
    // Calls back to back take turns on two connections (src/hyperfleet/client.test.ts says why).
    assert.ok(tlsConnections - before <= 2);
  });

  it('without caFile, trusts the CAs of NODE_EXTRA_CA_CERTS', async () => {
    // Node reads NODE_EXTRA_CA_CERTS once, at start: a process of its own.
    const script = `import { createHyperFleetClient } from ${JSON.stringify(new URL('../../src/hyperfleet/index.ts', import.meta.url).href)};
      console.log((await createHyperFleetClient({ baseUrl: ${JSON.stringify(url)}, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } }).listClusters()).total);`;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      timeout: 30_000,
      env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile },
    });
    assert.equal(stdout.trim(), '0');
  });

  it('an untrusted certificate is a configuration error naming caFile, not retried', async () => {
    const client = createHyperFleetClient({ baseUrl: url, retry: FAST });
    const before = tcpConnections;
    await assert.rejects(
      client.listClusters(),
      isCode(
        'CONFIG_INVALID',
        /certificate we do not trust \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\).*hyperfleetApi\.caFile/,
      ),
    );
    assert.equal(tcpConnections - before, 1);
  });

  it('a missing or non-PEM CA file, or one set for an http URL, fails at creation', async () => {
    assert.throws(
      () => createHyperFleetClient({ baseUrl: url, caFile: join(dir, 'missing.pem'), retry: FAST }),
      isCode('CONFIG_INVALID', /cannot read the HyperFleet API CA file .*ENOENT/),
    );
    const notPem = join(dir, 'not.pem');
    await writeFile(notPem, 'hello');
    assert.throws(
      () => createHyperFleetClient({ baseUrl: url, caFile: notPem, retry: FAST }),
      isCode('CONFIG_INVALID', /holds no PEM certificate/),
    );
    assert.throws(
      () => createHyperFleetClient({ baseUrl: url.replace('https:', 'http:'), caFile, retry: FAST }),
      isCode('CONFIG_INVALID', /CA file is set, but http:.* is not an https URL/),
    );
  });
});
