import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import {
  loadContract,
  startHyperFleetApiStandIn,
  type HyperFleetApiStandIn,
  type HyperFleetApiStandInOptions,
} from '../../src/dev/hyperfleet-api/index.js';
import type {
  AdapterStatus,
  AdapterStatusCreateRequest,
  Cluster,
  ProblemDetails,
  ResourceCondition,
} from '../../src/hyperfleet/index.js';
import { jsonFixture } from '../support/fixtures.js';

const B = '/api/hyperfleet/v1';
const contract = loadContract();

interface Reply<T = unknown> {
  status: number;
  headers: Headers;
  json: T;
}

/** The contract's path template for a request path, found by the test itself (not the server's router). */
function templateOf(path: string): string | undefined {
  const bare = path.split('?')[0] ?? '';
  if (bare === `${B}/clusters`) return `${B}/clusters`;
  if (/^\/api\/hyperfleet\/v1\/clusters\/[^/]+$/.test(bare)) return `${B}/clusters/{cluster_id}`;
  if (/^\/api\/hyperfleet\/v1\/clusters\/[^/]+\/statuses$/.test(bare))
    return `${B}/clusters/{cluster_id}/statuses`;
  return undefined;
}

let api: HyperFleetApiStandIn;

/** One request; every answer is checked against the contract's declared response schema with ajv. */
async function call<T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply<T>> {
  const init: RequestInit = {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
  };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  const response = await fetch(`${api.url}${path}`, init);
  const text = await response.text();
  const json = (text === '' ? undefined : JSON.parse(text)) as T;
  const violations = contract.checkResponse(
    templateOf(path),
    method,
    response.status,
    response.headers.get('content-type') ?? undefined,
    json,
  );
  assert.deepEqual(violations, [], `${method} ${path} → ${response.status} matches the contract`);
  return { status: response.status, headers: response.headers, json };
}

let names = 0;
async function createCluster(
  spec: Record<string, unknown> = { provider: 'gcp' },
  labels?: Record<string, string>,
): Promise<Cluster> {
  names += 1;
  const reply = await call<Cluster>('POST', `${B}/clusters`, {
    kind: 'Cluster',
    name: `cluster-${names}`,
    spec,
    ...(labels ? { labels } : {}),
  });
  assert.equal(reply.status, 201);
  return reply.json;
}

function report(
  adapter: string,
  generation: number,
  available: 'True' | 'False' | 'Unknown' = 'True',
  extra: { finalized?: 'True' | 'False'; time?: Date } = {},
): AdapterStatusCreateRequest {
  return {
    adapter,
    observed_generation: generation,
    observed_time: (extra.time ?? new Date()).toISOString(),
    conditions: [
      { type: 'Applied', status: 'True', reason: 'Applied' },
      { type: 'Available', status: available, reason: available === 'True' ? 'Available' : 'NotAvailable' },
      { type: 'Health', status: 'True', reason: 'Healthy' },
      ...(extra.finalized === undefined ? [] : [{ type: 'Finalized', status: extra.finalized }]),
    ],
  };
}

const put = (id: string, body: unknown) =>
  call<AdapterStatus | ProblemDetails>('PUT', `${B}/clusters/${id}/statuses`, body);
const condition = (cluster: Cluster, type: string): ResourceCondition | undefined =>
  cluster.status.conditions.find((c) => c.type === type);
const getCluster = async (id: string) => (await call<Cluster>('GET', `${B}/clusters/${id}`)).json;

async function restart(options: HyperFleetApiStandInOptions = {}): Promise<void> {
  assert.deepEqual(api.violations, [], 'the server checked its own answers too');
  await api.stop();
  api = await startHyperFleetApiStandIn(options);
}

describe('HyperFleet API stand-in', () => {
  before(async () => {
    api = await startHyperFleetApiStandIn();
  });
  afterEach(() => {
    assert.deepEqual(api.violations, [], 'the server checked its own answers too');
  });
  after(async () => {
    await api.stop();
  });

  it('the response check is not vacuous', () => {
    assert.notDeepEqual(
      contract.checkResponse(`${B}/clusters/{cluster_id}`, 'GET', 200, 'application/json', {
        kind: 'Cluster',
        name: 'x',
      }),
      [],
    );
    assert.notDeepEqual(
      contract.checkResponse(`${B}/clusters/{cluster_id}`, 'GET', 404, 'application/json', { title: 'x' }),
      [],
    );
  });

  describe('clusters', () => {
    it('create: generation 1, a lowercase UUIDv7 id, the mandatory conditions', async () => {
      const cluster = await createCluster();
      assert.match(cluster.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(cluster.generation, 1);
      assert.equal(cluster.href, `${B}/clusters/${cluster.id}`);
      assert.deepEqual(
        cluster.status.conditions.map((c) => [c.type, c.status]),
        [
          ['Reconciled', 'False'],
          ['LastKnownReconciled', 'False'],
        ],
      );
      assert.deepEqual(await getCluster(cluster.id), cluster);
    });

    it('create: request validation, duplicate names, media type', async () => {
      const bad = await call<ProblemDetails>('POST', `${B}/clusters`, {
        kind: 'Cluster',
        name: 'Bad_Name',
        spec: {},
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.json.code, 'HYPERFLEET-VAL-000');
      assert.deepEqual(
        bad.json.errors?.map((e) => [e.field, e.constraint]),
        [['name', 'pattern']],
      );
      const taken = await createCluster();
      const duplicate = await call<ProblemDetails>('POST', `${B}/clusters`, {
        kind: 'Cluster',
        name: taken.name,
        spec: {},
      });
      assert.equal(duplicate.status, 409);
      assert.equal(duplicate.json.code, 'HYPERFLEET-CNF-001');
      assert.equal(
        (await call('POST', `${B}/clusters`, { kind: 'NodePool', name: 'abc', spec: {} })).status,
        400,
      );
      const malformed = await call<ProblemDetails>('POST', `${B}/clusters`, '{"kind":');
      assert.equal(malformed.status, 400);
      assert.equal(malformed.json.code, 'HYPERFLEET-VAL-006');
      assert.equal((await call('POST', `${B}/clusters`, 'x', { 'content-type': 'text/plain' })).status, 415);
      assert.equal(
        (
          await call('POST', `${B}/clusters`, {
            kind: 'Cluster',
            name: 'big',
            spec: { blob: 'x'.repeat(1024 * 1024) },
          })
        ).status,
        413,
      );
    });

    it('not found, unknown routes, wrong methods', async () => {
      const missing = await call<ProblemDetails>('GET', `${B}/clusters/019466a0-0000-7000-8000-000000000000`);
      assert.equal(missing.status, 404);
      assert.equal(missing.json.code, 'HYPERFLEET-NTF-001');
      for (const path of ['/api/hyperfleet/v2/clusters', `${B}/clusterz`, '/healthz']) {
        const route = await call<ProblemDetails>('GET', path);
        assert.equal(route.status, 404);
        assert.equal(route.json.code, 'HYPERFLEET-NTF-000');
      }
      const post = await call<ProblemDetails>('POST', `${B}/clusters/x/statuses`, report('pullsecret', 1));
      assert.equal(post.status, 405);
      assert.equal(post.headers.get('allow'), 'GET, PUT');
      assert.equal((await call('GET', `${B}/clusters/x/nodepools`)).status, 501);
      assert.equal((await call('GET', `${B}/clusters/..%2F..%2Fclusters`)).status, 404);
    });

    // hyperfleet-api pkg/services/cluster.go `Patch`: any change of spec or labels bumps the generation.
    it('patch: spec or label changes bump the generation, a patch that changes nothing does not', async () => {
      const cluster = await createCluster({ provider: 'gcp' }, { env: 'dev' });
      const patch = (body: unknown) =>
        call<Cluster & ProblemDetails>('PATCH', `${B}/clusters/${cluster.id}`, body);
      const labels = await patch({ labels: { env: 'prod' } });
      assert.equal(labels.status, 200);
      assert.equal(labels.json.generation, 2, 'a label-only change bumps it');
      assert.deepEqual(labels.json.labels, { env: 'prod' });
      assert.equal(
        (await patch({ spec: { provider: 'gcp' }, labels: { env: 'prod' } })).json.generation,
        2,
        'same spec and labels: no bump',
      );
      const changed = await patch({
        spec: { provider: 'gcp', region: 'us-central1' },
        labels: { env: 'prod' },
      });
      assert.equal(changed.json.generation, 3);
      assert.deepEqual(changed.json.spec, { provider: 'gcp', region: 'us-central1' });
      assert.equal((await patch({})).status, 400);
      assert.equal((await patch({ name: 'renamed' })).json.errors?.[0]?.field, 'name');
    });

    it('lists with page, size and total, newest first by default; size above 100 is 400 HYPERFLEET-VAL-004', async () => {
      await restart();
      for (let i = 0; i < 5; i++) await createCluster();
      const created = (
        await call<{ items: Cluster[] }>('GET', `${B}/clusters?order=created_time%20asc`)
      ).json.items.map((c) => c.id);
      const newest = (await call<{ items: Cluster[] }>('GET', `${B}/clusters`)).json.items.map((c) => c.id);
      assert.deepEqual(newest, [...created].reverse(), 'default order created_time desc');
      assert.equal((await call('GET', `${B}/clusters?size=100`)).status, 200);
      const tooBig = await call<ProblemDetails>('GET', `${B}/clusters?size=101`);
      assert.equal(tooBig.status, 400);
      assert.deepEqual(
        [tooBig.json.code, tooBig.json.title, tooBig.json.type],
        ['HYPERFLEET-VAL-004', 'Value Out of Range', 'https://api.hyperfleet.io/errors/validation-error'],
      );
      assert.equal(tooBig.json.detail, 'Invalid size parameter: 101 exceeds maximum allowed value of 100');
      assert.equal(
        (await call<ProblemDetails>('GET', `${B}/clusters?page=0`)).json.code,
        'HYPERFLEET-VAL-004',
      );
      assert.equal(
        (await call<ProblemDetails>('GET', `${B}/clusters?size=abc`)).json.code,
        'HYPERFLEET-VAL-003',
      );
      const first = await call<{ page: number; size: number; total: number; items: Cluster[] }>(
        'GET',
        `${B}/clusters?page=1&size=2`,
      );
      assert.deepEqual(
        [first.json.page, first.json.size, first.json.total, first.json.items.length],
        [1, 2, 5, 2],
      );
      const last = await call<{ size: number; items: Cluster[] }>('GET', `${B}/clusters?page=3&size=2`);
      assert.equal(last.json.size, 1);
      assert.equal(
        (await call<{ items: Cluster[] }>('GET', `${B}/clusters?page=4&size=2`)).json.items.length,
        0,
      );
      const all = (await call<{ items: Cluster[] }>('GET', `${B}/clusters`)).json.items.map((c) => c.name);
      const desc = (
        await call<{ items: Cluster[] }>('GET', `${B}/clusters?order=name%20desc`)
      ).json.items.map((c) => c.name);
      assert.deepEqual(desc, [...all].sort().reverse());
      for (const query of ['page=0', 'size=abc', 'order=color'])
        assert.equal((await call('GET', `${B}/clusters?${query}`)).status, 400, query);
      assert.equal(
        (await call<ProblemDetails>('GET', `${B}/clusters?search=name%3D'x'`)).json.code,
        'HYPERFLEET-VAL-007',
      );
    });
  });

  describe('adapter statuses', () => {
    it('PUT validates the body against AdapterStatusCreateRequest', async () => {
      const { id } = await createCluster();
      const missing = await put(id, { adapter: 'pullsecret', observed_generation: 1, conditions: [] });
      assert.equal(missing.status, 400);
      assert.deepEqual(
        (missing.json as ProblemDetails).errors?.map((e) => [e.field, e.constraint]),
        [['observed_time', 'required']],
      );
      const wrong = await put(id, {
        ...report('pullsecret', 1),
        observed_generation: '1',
        conditions: [{ type: 'Available', status: 'Maybe' }],
      });
      const fields = (wrong.json as ProblemDetails).errors?.map((e) => e.field);
      assert.deepEqual(fields, ['observed_generation', 'conditions[0].status']);
      assert.equal((await put(id, { ...report('pullsecret', 1), observed_time: 'yesterday' })).status, 400);
    });

    it('PUT requires Applied, Available and Health', async () => {
      const { id } = await createCluster();
      const body = report('pullsecret', 1);
      body.conditions = body.conditions.filter((c) => c.type !== 'Health');
      const reply = await put(id, body);
      assert.equal(reply.status, 400);
      assert.match((reply.json as ProblemDetails).errors?.[0]?.message ?? '', /Health/);
    });

    // hyperfleet-api pkg/handlers/validation.go `validateObservedTimeRange`: 5 minutes ahead, 30 minutes behind.
    it('PUT bounds observed_time to 5 minutes ahead and 30 minutes behind the server clock', async () => {
      const { id } = await createCluster();
      const at = (minutes: number) =>
        report('pullsecret', 1, 'True', { time: new Date(Date.now() + minutes * 60_000) });
      const ahead = await put(id, at(6));
      assert.equal(ahead.status, 400);
      assert.equal(
        (ahead.json as ProblemDetails).detail,
        'observed_time must not be more than 5m0s in the future',
      );
      const old = await put(id, at(-31));
      assert.equal(old.status, 400);
      assert.equal(
        (old.json as ProblemDetails).detail,
        'observed_time must not be more than 30m0s in the past',
      );
      assert.equal((old.json as ProblemDetails).code, 'HYPERFLEET-VAL-000');
      assert.equal((await put(id, at(-29))).status, 201);
      assert.equal((await put(id, at(4))).status, 201);
    });

    // hyperfleet-api pkg/services/adapter_status_validation.go: a zero observed_time is discarded (204).
    it('PUT with a zero observed_time is discarded (204)', async () => {
      const { id } = await createCluster();
      assert.equal(
        (await put(id, { ...report('pullsecret', 1), observed_time: '0001-01-01T00:00:00Z' })).status,
        204,
      );
      assert.equal(api.log.at(-1)?.discarded, 'zero-observed-time');
    });

    it('PUT on an unknown cluster is 404 HYPERFLEET-NTF-001', async () => {
      const reply = await put('019466a0-0000-7000-8000-000000000000', report('pullsecret', 1));
      assert.equal(reply.status, 404);
      assert.equal((reply.json as ProblemDetails).code, 'HYPERFLEET-NTF-001');
    });

    it('stores newer or equal generations (201), discards older ones (204)', async () => {
      const cluster = await createCluster();
      await call('PATCH', `${B}/clusters/${cluster.id}`, { spec: { provider: 'gcp', v: 2 } });
      const stored = await put(cluster.id, report('pullsecret', 2));
      assert.equal(stored.status, 201);
      assert.equal((stored.json as AdapterStatus).observed_generation, 2);
      const stale = await put(cluster.id, report('pullsecret', 1));
      assert.equal(stale.status, 204);
      assert.equal(stale.json, undefined);
      assert.equal(api.log.at(-1)?.discarded, 'stale-generation');
      assert.equal((await put(cluster.id, report('pullsecret', 2, 'False'))).status, 201);
      assert.equal((await put(cluster.id, report('pullsecret', 3))).status, 204, 'ahead of the cluster');
      assert.equal(
        (await put(cluster.id, report('pullsecret', 2, 'Unknown'))).status,
        204,
        'a later Available=Unknown is not processed',
      );
      const list = await call<{ items: AdapterStatus[]; total: number }>(
        'GET',
        `${B}/clusters/${cluster.id}/statuses`,
      );
      assert.equal(list.json.total, 1);
      assert.equal(list.json.items[0]?.conditions.find((c) => c.type === 'Available')?.status, 'False');
    });

    it("stores an adapter's first Available=Unknown report without a cluster condition from it, and discards later ones", async () => {
      const cluster = await createCluster();
      assert.equal((await put(cluster.id, report('pullsecret', 1, 'Unknown'))).status, 201);
      assert.equal(condition(await getCluster(cluster.id), 'PullsecretSuccessful'), undefined);
      assert.equal((await put(cluster.id, report('pullsecret', 1, 'Unknown'))).status, 204);
      assert.equal(api.log.at(-1)?.discarded, 'available-unknown');
      assert.equal((await put(cluster.id, report('pullsecret', 1, 'True'))).status, 201);
      assert.equal(condition(await getCluster(cluster.id), 'PullsecretSuccessful')?.status, 'True');
    });

    it('aggregates {Adapter}Successful, Reconciled and LastKnownReconciled', async () => {
      const cluster = await createCluster();
      for (const adapter of ['validation', 'dns', 'placement'])
        assert.equal((await put(cluster.id, report(adapter, 1))).status, 201);
      let current = await getCluster(cluster.id);
      assert.equal(condition(current, 'Reconciled')?.status, 'False', 'pullsecret has not reported');
      for (const type of ['ValidationSuccessful', 'DnsSuccessful', 'PlacementSuccessful']) {
        const c = condition(current, type);
        assert.equal(c?.status, 'True', type);
        assert.equal(c.observed_generation, 1);
        assert.ok(c.created_time && c.last_updated_time && c.last_transition_time);
      }
      await put(cluster.id, report('pullsecret', 1));
      current = await getCluster(cluster.id);
      assert.equal(condition(current, 'Reconciled')?.status, 'True');
      assert.equal(condition(current, 'LastKnownReconciled')?.status, 'True');
      assert.equal(condition(current, 'PullsecretSuccessful')?.reason, 'Available');
      const transition = condition(current, 'PullsecretSuccessful')?.last_transition_time;
      await put(cluster.id, report('pullsecret', 1));
      assert.equal(
        condition(await getCluster(cluster.id), 'PullsecretSuccessful')?.last_transition_time,
        transition,
        'unchanged status keeps its transition time',
      );
      const bumped = (
        await call<Cluster>('PATCH', `${B}/clusters/${cluster.id}`, { spec: { provider: 'gcp', v: 2 } })
      ).json;
      assert.equal(condition(bumped, 'Reconciled')?.status, 'False');
      assert.equal(condition(bumped, 'LastKnownReconciled')?.status, 'True', 'sticky across generations');
      assert.equal(condition(bumped, 'LastKnownReconciled')?.observed_generation, 1);
      await put(cluster.id, report('pullsecret', 2, 'False'));
      assert.equal(condition(await getCluster(cluster.id), 'PullsecretSuccessful')?.status, 'False');
    });

    it('seeded fixture conditions are kept; reports through the API replace them', async () => {
      await restart();
      const seeded = await api.seedCluster(jsonFixture<Cluster>('clusters/gcp-cluster.json'));
      const fetched = await getCluster(seeded.id);
      assert.equal(condition(fetched, 'ValidationSuccessful')?.status, 'True');
      assert.equal(condition(fetched, 'Reconciled')?.created_time, '2026-01-01T10:00:00Z');
      await put(seeded.id, report('dns', 2, 'False'));
      assert.equal(condition(await getCluster(seeded.id), 'DnsSuccessful')?.status, 'False');
      await assert.rejects(api.seedCluster({ name: 'No', spec: {} }), /not a valid Cluster/);
    });
  });

  describe('deletion', () => {
    it('is soft: deleted_time, generation + 1, removal after Finalized=True at that generation', async () => {
      await restart({ requiredAdapters: ['pullsecret', 'dns'] });
      const cluster = await createCluster();
      const deleted = await call<Cluster>('DELETE', `${B}/clusters/${cluster.id}`);
      assert.equal(deleted.status, 202);
      assert.ok(deleted.json.deleted_time);
      assert.equal(deleted.json.generation, 2);
      assert.equal(
        (await call<Cluster>('DELETE', `${B}/clusters/${cluster.id}`)).json.generation,
        2,
        'a second delete changes nothing',
      );
      assert.equal((await call('PATCH', `${B}/clusters/${cluster.id}`, { labels: { a: 'b' } })).status, 409);
      assert.equal(
        (await put(cluster.id, report('pullsecret', 1, 'False', { finalized: 'True' }))).status,
        201,
      );
      assert.equal(
        (await put(cluster.id, report('pullsecret', 2, 'False', { finalized: 'False' }))).status,
        201,
      );
      assert.equal(
        (await put(cluster.id, report('pullsecret', 2, 'False', { finalized: 'True' }))).status,
        201,
      );
      assert.equal((await call('GET', `${B}/clusters/${cluster.id}`)).status, 200, 'dns has not finalized');
      assert.equal((await put(cluster.id, report('dns', 2, 'False', { finalized: 'True' }))).status, 201);
      assert.equal((await call('GET', `${B}/clusters/${cluster.id}`)).status, 404);
      assert.equal((await call('GET', `${B}/clusters/${cluster.id}/statuses`)).status, 404);
      assert.equal((await put(cluster.id, report('pullsecret', 2))).status, 404);
    });
  });

  describe('authentication, faults and persistence', () => {
    it('bearer tokens: 401 problem+json without or with a wrong token', async () => {
      await restart({ tokens: ['right-token-123'] });
      const none = await call<ProblemDetails>('GET', `${B}/clusters`);
      assert.equal(none.status, 401);
      assert.equal(none.json.code, 'HYPERFLEET-AUT-001');
      assert.equal(none.headers.get('www-authenticate'), 'Bearer');
      assert.equal(
        (await call<ProblemDetails>('GET', `${B}/clusters`, undefined, { authorization: 'Bearer wrong' }))
          .json.code,
        'HYPERFLEET-AUT-002',
      );
      assert.equal(
        (await call('GET', `${B}/clusters`, undefined, { authorization: 'Bearer right-token-123' })).status,
        200,
      );
      assert.deepEqual(
        api.log.map((l) => l.authorization),
        [false, true, true],
      );
    });

    it('faults: counted per route, answered as problem+json, or a hang cut by stop()', async () => {
      await restart();
      api.injectFault({ route: 'listClusters', status: 503, times: 2, retryAfter: '1' });
      const first = await call<ProblemDetails>('GET', `${B}/clusters`);
      assert.equal(first.status, 503);
      assert.equal(first.headers.get('retry-after'), '1');
      assert.equal((await call('GET', `${B}/clusters`)).status, 503);
      assert.equal((await call('GET', `${B}/clusters`)).status, 200);
      assert.equal(api.calls.listClusters, 3);
      api.injectFault({ route: '*', body: '<html>bad gateway</html>', status: 502 });
      const html = await fetch(`${api.baseUrl}/clusters`);
      assert.equal(html.headers.get('content-type'), 'text/html');
      await html.text();
      api.injectFault({ route: 'getCluster', hang: true });
      const hanging = fetch(`${api.baseUrl}/clusters/x`).then(
        () => 'answered',
        () => 'cut',
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      await restart();
      assert.equal(await hanging, 'cut');
    });

    it('persists every change atomically and loads it at start', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'hf-standin-'));
      const dataFile = join(dir, 'state', 'hyperfleet.json');
      try {
        await restart({ dataFile });
        const kept = await createCluster({ provider: 'gcp' }, { team: 'a' });
        await put(kept.id, report('pullsecret', 1));
        const gone = await createCluster();
        await call('DELETE', `${B}/clusters/${gone.id}`);
        await put(gone.id, report('pullsecret', 2, 'False', { finalized: 'True' }));
        const before = await getCluster(kept.id);
        assert.equal((await stat(dataFile)).mode & 0o777, 0o600);
        await restart({ dataFile });
        assert.deepEqual(await getCluster(kept.id), before);
        assert.equal(api.listStatuses(kept.id).length, 1);
        assert.equal((await call<{ total: number }>('GET', `${B}/clusters`)).json.total, 1);
        assert.equal(
          (await put(kept.id, report('pullsecret', 1, 'False'))).status,
          201,
          'stored reports keep their rules after a restart',
        );
        const saved = JSON.parse(await readFile(dataFile, 'utf8')) as { clusters: unknown[] };
        assert.equal(saved.clusters.length, 1);
        await api.stop();
        await writeFile(
          dataFile,
          '{"format":"hyperfleet-api-stand-in/1","clusters":[{"cluster":{"name":"x"},"statuses":[]}]}',
        );
        await assert.rejects(startHyperFleetApiStandIn({ dataFile }), /invalid cluster/);
      } finally {
        api = await startHyperFleetApiStandIn();
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('listens on loopback only', async () => {
      await assert.rejects(startHyperFleetApiStandIn({ host: '0.0.0.0' }), /loopback only/);
    });
  });
});
