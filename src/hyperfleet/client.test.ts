import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { PullSecretError } from '../errors/index.js';
import { createLogger } from '../observability/logger.js';
import { createHyperFleetClient } from './client.js';
import { MAX_RESPONSE_BYTES } from './http-exchange.js';
import type { AdapterStatusReport } from './types.js';

const run = promisify(execFile);
const ID = '019466a0-8f8e-7abc-9def-0123456789ab';
const FAST = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 };

function isCode(code: string) {
  return (err: unknown) => err instanceof PullSecretError && err.code === code;
}

/** What the server saw of one request. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  socket: Socket;
}

type Answer = (res: ServerResponse, req: IncomingMessage) => void;

/** A loopback HTTP server that answers requests from a script, in order, recording each request. */
async function scriptedServer(answers: Answer[]) {
  const requests: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        socket: req.socket,
      });
      const next = answers.shift();
      if (next === undefined) res.writeHead(500).end();
      else next(res, req);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  servers.push(server);
  return { url: `http://127.0.0.1:${port}`, requests };
}

const servers: Server[] = [];
after(() => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
});

function json(status: number, body: unknown, type = 'application/json'): Answer {
  return (res) => res.writeHead(status, { 'content-type': type }).end(JSON.stringify(body));
}

function empty(status: number, headers: Record<string, string> = {}): Answer {
  return (res) => res.writeHead(status, headers).end();
}

/** Drops the connection without an answer. */
const reset: Answer = (_res, req) => req.socket.destroy();

function captureLogger() {
  const lines: string[] = [];
  return {
    lines,
    logger: createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } }),
  };
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

describe('HyperFleet client (scripted loopback server)', () => {
  it('a malformed success answer is a permanent "unexpected response", not retried', async () => {
    const server = await scriptedServer([json(200, { id: ID, kind: 'Cluster', generation: 'two' })]);
    const client = createHyperFleetClient({ baseUrl: server.url, retry: FAST });
    await assert.rejects(
      client.getCluster(ID),
      (err: unknown) =>
        isCode('API_REQUEST_INVALID')(err) && /unexpected response .*generation/.test((err as Error).message),
    );
    assert.equal(server.requests.length, 1);
  });

  it('an HTML page with 200 is an unexpected response too', async () => {
    const server = await scriptedServer([
      (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>'),
    ]);
    const client = createHyperFleetClient({ baseUrl: server.url, retry: FAST });
    await assert.rejects(client.getCluster(ID), /body is not JSON/);
  });

  it('a body over the size bound is refused, not retried', async () => {
    const server = await scriptedServer([
      (res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(`"${'x'.repeat(MAX_RESPONSE_BYTES)}"`),
    ]);
    const client = createHyperFleetClient({ baseUrl: server.url, retry: FAST });
    await assert.rejects(
      client.getCluster(ID),
      (err: unknown) => isCode('API_REQUEST_INVALID')(err) && /larger than/.test((err as Error).message),
    );
    assert.equal(server.requests.length, 1);
  });

  it('does not follow redirects, even to the same server', async () => {
    const server = await scriptedServer([
      empty(302, { location: '/elsewhere' }),
      json(200, { page: 1, size: 0, total: 0, items: [] }),
    ]);
    const client = createHyperFleetClient({ baseUrl: server.url, retry: FAST });
    await assert.rejects(client.getCluster(ID), isCode('CONFIG_INVALID'));
    assert.equal(server.requests.length, 1);
  });

  it('waits at least Retry-After (capped) before retrying', async () => {
    const { lines, logger } = captureLogger();
    const server = await scriptedServer([
      empty(429, { 'retry-after': '3600' }),
      json(200, { page: 1, size: 0, total: 0, items: [] }),
    ]);
    const client = createHyperFleetClient({ baseUrl: server.url, retry: FAST, maxRetryAfterMs: 150, logger });
    const started = Date.now();
    const list = await client.listClusters();
    assert.equal(list.total, 0);
    assert.ok(Date.now() - started >= 140, 'the retry waited for Retry-After');
    const retry = JSON.parse(lines.find((l) => l.includes('retrying')) ?? '{}') as {
      delay_ms?: number;
      http_status?: number;
    };
    assert.equal(retry.delay_ms, 150);
    assert.equal(retry.http_status, 429);
  });

  it('network errors are retryable API_UNAVAILABLE with the socket error code', async () => {
    const server = await scriptedServer([reset, reset, reset]);
    const client = createHyperFleetClient({ baseUrl: server.url, retry: FAST });
    await assert.rejects(
      client.getCluster(ID),
      (err: unknown) => isCode('API_UNAVAILABLE')(err) && /ECONNRESET/.test((err as Error).message),
    );
    assert.equal(server.requests.length, 3);

    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    closed.close();
    const refused = createHyperFleetClient({ baseUrl: `http://127.0.0.1:${port}`, retry: FAST });
    await assert.rejects(
      refused.getCluster(ID),
      (err: unknown) => isCode('API_UNAVAILABLE')(err) && /ECONNREFUSED/.test((err as Error).message),
    );
  });

  it('a connection that breaks in the middle of the body is retried', async () => {
    const halfBody: Answer = (res, req) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"id":');
      setTimeout(() => req.socket.destroy(), 10);
    };
    const server = await scriptedServer([halfBody, json(200, { page: 1, size: 0, total: 0, items: [] })]);
    const client = createHyperFleetClient({ baseUrl: server.url, retry: FAST });
    assert.equal((await client.listClusters()).total, 0);
    assert.equal(server.requests.length, 2);
  });

  it('the deadline covers reading the body: an answer that trickles past it is cut off and retried', async () => {
    const trickle: Answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"page":');
      // One byte now and then keeps the connection busy, never finishing within the deadline.
      const drip = setInterval(() => res.write(' '), 20);
      res.on('close', () => clearInterval(drip));
    };
    const server = await scriptedServer([trickle, json(200, { page: 1, size: 0, total: 0, items: [] })]);
    const client = createHyperFleetClient({ baseUrl: server.url, retry: FAST, timeoutMs: 200 });
    assert.equal((await client.listClusters()).total, 0);
    assert.equal(server.requests.length, 2);
    const once = createHyperFleetClient({
      baseUrl: (await scriptedServer([trickle])).url,
      retry: { ...FAST, maxAttempts: 1 },
      timeoutMs: 200,
    });
    await assert.rejects(once.listClusters(), isCode('API_UNAVAILABLE'));
  });

  it('a kept-alive connection left idle does not keep the process alive', async () => {
    const server = await scriptedServer([json(200, { page: 1, size: 0, total: 0, items: [] })]);
    const script = `import { createHyperFleetClient } from ${JSON.stringify(new URL('./client.ts', import.meta.url).href)};
      const client = createHyperFleetClient({ baseUrl: ${JSON.stringify(server.url)}, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } });
      console.log((await client.listClusters()).total);`;
    // A process held open by the idle connection would not exit before the guard's timeout kills it.
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      timeout: 30_000,
    });
    assert.equal(stdout.trim(), '0');
    assert.equal(server.requests.length, 1);
  });

  it('reuses kept-alive connections for calls in sequence', async () => {
    const server = await scriptedServer(Array.from({ length: 8 }, () => empty(204)));
    const client = createHyperFleetClient({ baseUrl: server.url, retry: FAST });
    for (let i = 0; i < 8; i++) assert.equal(await client.putStatus(ID, report), 'stale');
    // undici hands a connection to the next call one event-loop turn after an answer (in case the
    // server closes it after all), so calls back to back alternate between two.
    assert.ok(new Set(server.requests.map((r) => r.socket)).size <= 2);
  });

  it('a 404 without problem details still means "gone", and is logged', async () => {
    const { lines, logger } = captureLogger();
    const server = await scriptedServer([empty(404)]);
    const client = createHyperFleetClient({ baseUrl: server.url, retry: FAST, logger });
    assert.equal(await client.getCluster(ID), undefined);
    assert.ok(lines.some((l) => l.includes('404 without problem details') && l.includes(ID)));
  });

  it('checks a report before sending it', async () => {
    const server = await scriptedServer([]);
    const client = createHyperFleetClient({ baseUrl: server.url, retry: FAST });
    const noHealth = { ...report, conditions: report.conditions.filter((c) => c.type !== 'Health') };
    await assert.rejects(
      client.putStatus(ID, noHealth),
      (err: unknown) =>
        isCode('API_REQUEST_INVALID')(err) && /Health is missing/.test((err as Error).message),
    );
    await assert.rejects(
      client.putStatus(ID, { ...report, observed_generation: 0 }),
      isCode('API_REQUEST_INVALID'),
    );
    await assert.rejects(client.listClusters({ page: 0 }), isCode('CONFIG_INVALID'));
    assert.equal(server.requests.length, 0);
  });

  it('sends the report as JSON to the encoded statuses path', async () => {
    const server = await scriptedServer([empty(204)]);
    const client = createHyperFleetClient({ baseUrl: `${server.url}/`, retry: FAST });
    assert.equal(await client.putStatus(ID, report), 'stale');
    const sent = server.requests[0];
    assert.equal(sent?.url, `/api/hyperfleet/v1/clusters/${ID}/statuses`);
    assert.equal(sent?.method, 'PUT');
    assert.equal(sent?.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(sent?.body ?? ''), report);
  });

  it('an abort by the caller is ABORTED and not retried', async () => {
    const controller = new AbortController();
    const server = await scriptedServer([() => controller.abort()]);
    const client = createHyperFleetClient({ baseUrl: server.url, retry: FAST });
    await assert.rejects(client.getCluster(ID, { signal: controller.signal }), isCode('ABORTED'));
    assert.equal(server.requests.length, 1);
  });
});
