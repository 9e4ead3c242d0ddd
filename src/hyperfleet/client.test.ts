import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PullSecretError } from '../errors/index.js';
import { createLogger } from '../observability/logger.js';
import { createHyperFleetClient } from './client.js';
import type { AdapterStatusReport } from './types.js';

const ID = '019466a0-8f8e-7abc-9def-0123456789ab';
const FAST = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 };

function isCode(code: string) {
  return (err: unknown) => err instanceof PullSecretError && err.code === code;
}

/** A fetch that answers from a list, recording each request. */
function fakeFetch(answers: (() => Response | Promise<Response>)[]) {
  const requests: { url: string; init: RequestInit | undefined }[] = [];
  const fn = (async (url: string | URL | Request, init?: RequestInit) => {
    requests.push({ url: url instanceof Request ? url.url : url.toString(), init });
    const next = answers.shift();
    if (next === undefined) throw new Error('no more answers');
    return next();
  }) as typeof fetch;
  return { fn, requests };
}

function json(status: number, body: unknown, type = 'application/json'): () => Response {
  return () => new Response(JSON.stringify(body), { status, headers: { 'content-type': type } });
}

function captureLogger() {
  const lines: string[] = [];
  return { lines, logger: createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } }) };
}

const report: AdapterStatusReport = {
  adapter: 'pullsecret',
  observed_generation: 1,
  observed_time: '2026-01-01T00:00:00Z',
  conditions: [
    { type: 'Applied', status: 'True' },
    { type: 'Available', status: 'True' },
    { type: 'Health', status: 'True' },
  ],
};

describe('HyperFleet client (fake transport)', () => {
  it('a malformed success answer is a permanent "unexpected response", not retried', async () => {
    const fake = fakeFetch([json(200, { id: ID, kind: 'Cluster', generation: 'two' })]);
    const client = createHyperFleetClient({ baseUrl: 'http://127.0.0.1:1', retry: FAST, fetch: fake.fn });
    await assert.rejects(client.getCluster(ID), (err: unknown) => isCode('API_REQUEST_INVALID')(err) && /unexpected response .*generation/.test((err as Error).message));
    assert.equal(fake.requests.length, 1);
  });

  it('an HTML page with 200 is an unexpected response too', async () => {
    const fake = fakeFetch([() => new Response('<html>login</html>', { status: 200, headers: { 'content-type': 'text/html' } })]);
    const client = createHyperFleetClient({ baseUrl: 'http://127.0.0.1:1', retry: FAST, fetch: fake.fn });
    await assert.rejects(client.getCluster(ID), /body is not JSON/);
  });

  it('does not follow redirects', async () => {
    const fake = fakeFetch([() => new Response(null, { status: 302, headers: { location: 'https://elsewhere.example/' } })]);
    const client = createHyperFleetClient({ baseUrl: 'http://127.0.0.1:1', retry: FAST, fetch: fake.fn });
    await assert.rejects(client.getCluster(ID), isCode('CONFIG_INVALID'));
    assert.equal(fake.requests[0]?.init?.redirect, 'manual');
  });

  it('waits at least Retry-After (capped) before retrying', async () => {
    const { lines, logger } = captureLogger();
    const fake = fakeFetch([
      () => new Response(null, { status: 429, headers: { 'retry-after': '3600' } }),
      json(200, { page: 1, size: 0, total: 0, items: [] }),
    ]);
    const client = createHyperFleetClient({ baseUrl: 'http://127.0.0.1:1', retry: FAST, fetch: fake.fn, maxRetryAfterMs: 150, logger });
    const started = Date.now();
    const list = await client.listClusters();
    assert.equal(list.total, 0);
    assert.ok(Date.now() - started >= 140, 'the retry waited for Retry-After');
    const retry = JSON.parse(lines.find((l) => l.includes('retrying')) ?? '{}') as { delay_ms?: number; http_status?: number };
    assert.equal(retry.delay_ms, 150);
    assert.equal(retry.http_status, 429);
  });

  it('network errors are retryable API_UNAVAILABLE with the socket error code', async () => {
    const refused = () => Promise.reject(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }));
    const fake = fakeFetch([refused, refused, refused]);
    const client = createHyperFleetClient({ baseUrl: 'http://127.0.0.1:1', retry: FAST, fetch: fake.fn });
    await assert.rejects(client.getCluster(ID), (err: unknown) => isCode('API_UNAVAILABLE')(err) && /ECONNREFUSED/.test((err as Error).message));
    assert.equal(fake.requests.length, 3);
  });

  it('a 404 without problem details still means "gone", and is logged', async () => {
    const { lines, logger } = captureLogger();
    const fake = fakeFetch([() => new Response(null, { status: 404 })]);
    const client = createHyperFleetClient({ baseUrl: 'http://127.0.0.1:1', retry: FAST, fetch: fake.fn, logger });
    assert.equal(await client.getCluster(ID), undefined);
    assert.ok(lines.some((l) => l.includes('404 without problem details') && l.includes(ID)));
  });

  it('checks a report before sending it', async () => {
    const fake = fakeFetch([]);
    const client = createHyperFleetClient({ baseUrl: 'http://127.0.0.1:1', retry: FAST, fetch: fake.fn });
    const noHealth = { ...report, conditions: report.conditions.filter((c) => c.type !== 'Health') };
    await assert.rejects(client.putStatus(ID, noHealth), (err: unknown) => isCode('API_REQUEST_INVALID')(err) && /Health is missing/.test((err as Error).message));
    await assert.rejects(client.putStatus(ID, { ...report, observed_generation: 0 }), isCode('API_REQUEST_INVALID'));
    await assert.rejects(client.listClusters({ page: 0 }), isCode('CONFIG_INVALID'));
    assert.equal(fake.requests.length, 0);
  });

  it('sends the report as JSON to the encoded statuses path', async () => {
    const fake = fakeFetch([() => new Response(null, { status: 204 })]);
    const client = createHyperFleetClient({ baseUrl: 'http://127.0.0.1:1/', retry: FAST, fetch: fake.fn });
    assert.equal(await client.putStatus(ID, report), 'stale');
    const sent = fake.requests[0];
    assert.equal(sent?.url, `http://127.0.0.1:1/api/hyperfleet/v1/clusters/${ID}/statuses`);
    assert.equal(sent?.init?.method, 'PUT');
    assert.equal(typeof sent?.init?.body, 'string');
    assert.deepEqual(JSON.parse(sent?.init?.body as string), report);
  });

  it('an abort by the caller is ABORTED and not retried', async () => {
    const controller = new AbortController();
    const fake = fakeFetch([
      () => {
        controller.abort();
        return Promise.reject(new DOMException('aborted', 'AbortError'));
      },
    ]);
    const client = createHyperFleetClient({ baseUrl: 'http://127.0.0.1:1', retry: FAST, fetch: fake.fn });
    await assert.rejects(client.getCluster(ID, { signal: controller.signal }), isCode('ABORTED'));
    assert.equal(fake.requests.length, 1);
  });
});
