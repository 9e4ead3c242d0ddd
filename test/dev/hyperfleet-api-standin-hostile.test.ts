import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { startHyperFleetApiStandIn, type HyperFleetApiStandIn } from '../../src/dev/hyperfleet-api/index.js';
import { jsonDepth, MAX_JSON_DEPTH } from '../../src/dev/hyperfleet-api/http-io.js';

// Hostile HTTP to the dev API stand-in: whatever the body, the answer is a 2xx or a 4xx problem+json,
// never a 500, a reset or a dead server.

const B = '/api/hyperfleet/v1';
let api: HyperFleetApiStandIn;
let clusterId: string;

before(async () => {
  api = await startHyperFleetApiStandIn({ maxBodyBytes: 64 * 1024 });
  clusterId = (await api.seedCluster({ kind: 'Cluster', name: 'hostile-target', generation: 1, spec: {} }))
    .id;
});
after(() => api.stop());

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

async function send(
  method: string,
  path: string,
  body: string | Uint8Array,
  contentType = 'application/json',
): Promise<Answer> {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: { 'content-type': contentType },
    body,
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    body: await response.text(),
  };
}

/** A 2xx, or a 4xx whose body is problem+json with the same status. */
function assertClassified(answer: Answer, what: string): void {
  assert.ok(
    (answer.status >= 200 && answer.status < 300) || (answer.status >= 400 && answer.status < 500),
    `${what}: status ${answer.status} ${answer.body.slice(0, 200)}`,
  );
  if (answer.status >= 400) {
    assert.equal(answer.contentType, 'application/problem+json', what);
    assert.equal((JSON.parse(answer.body) as { status: number }).status, answer.status, what);
  }
}

const nested = (depth: number, open: string, close: string, inner = '1'): string =>
  open.repeat(depth) + inner + close.repeat(depth);

describe('dev API stand-in under hostile bodies', () => {
  it('answers 400 problem+json to deeply nested JSON on every body-taking route', async () => {
    const deep = nested(5000, '[', ']');
    const routes: Array<[string, string, string]> = [
      ['POST', `${B}/clusters`, `{"kind":"Cluster","name":"deep-cluster","spec":{"x":${deep}}}`],
      ['PATCH', `${B}/clusters/${clusterId}`, `{"spec":{"x":${deep}}}`],
      [
        'PUT',
        `${B}/clusters/${clusterId}/statuses`,
        `{"adapter":"pullsecret","observed_generation":1,"observed_time":"2026-01-01T00:00:00Z","conditions":[],"data":{"x":${deep}}}`,
      ],
    ];
    for (const [method, path, body] of routes) {
      const answer = await send(method, path, body);
      assert.equal(answer.status, 400, `${method} ${path}: ${answer.body.slice(0, 200)}`);
      assertClassified(answer, `${method} ${path}`);
      assert.match(answer.body, /nested deeper than 256 levels/);
    }
  });

  it('answers 413 problem+json to an oversized chunked body, with no reset under the upload, and keeps serving on', async () => {
    const url = new URL(`${api.baseUrl}/clusters`);
    // `Connection: close`, as Python's urllib sends it: the server must not close the socket while the
    // client is still uploading (the client would see EPIPE / a reset instead of the answer).
    const headers = {
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
      connection: 'close',
    };
    const uploadErrors: string[] = [];
    const answer = await new Promise<Answer>((resolve) => {
      const req = request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () =>
            setTimeout(
              () =>
                resolve({
                  status: res.statusCode ?? 0,
                  contentType: String(res.headers['content-type']),
                  body,
                }),
              100,
            ),
          );
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => uploadErrors.push(err.code ?? err.message));
      const chunk = Buffer.alloc(16 * 1024, 'x');
      let sent = 0;
      const pump = (): void => {
        while (sent < 4 * 1024 * 1024) {
          sent += chunk.length;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end();
      };
      req.write('{"kind":"Cluster","name":"big","spec":{"blob":"');
      pump();
    });
    assert.equal(answer.status, 413);
    assertClassified(answer, 'oversized chunked body');
    assert.deepEqual(uploadErrors, []);
    assert.equal((await fetch(`${api.baseUrl}/clusters/${clusterId}`)).status, 200);
  });

  it('measures nesting without counting brackets inside strings', () => {
    assert.equal(jsonDepth('{"a":[1,{"b":"[[[{{{"}]}'), 3);
    assert.equal(jsonDepth('"\\"[[["'), 0);
    assert.equal(jsonDepth(nested(MAX_JSON_DEPTH, '[', ']')), MAX_JSON_DEPTH);
  });

  it('property: any body on any body-taking route gets a 2xx or a 4xx problem+json, never a 500', async () => {
    const jsonText = fc.oneof(
      fc.json({ depthSize: 'medium' }),
      fc.jsonValue().map((value) => JSON.stringify({ kind: 'Cluster', name: 'prop-cluster', spec: value })),
      fc.jsonValue().map((value) =>
        JSON.stringify({
          adapter: 'pullsecret',
          observed_generation: 1,
          observed_time: '2026-01-01T00:00:00Z',
          conditions: [],
          data: value,
        }),
      ),
      // Deep nesting, bare and inside the free-form fields the stand-in accepts (spec, data).
      fc
        .tuple(
          fc.integer({ min: 0, max: 20_000 }),
          fc.constantFrom<[string, string]>(['[', ']'], ['{"a":', '}']),
          fc.constantFrom(
            (v: string) => v,
            (v: string) => `{"kind":"Cluster","name":"deep-cluster","spec":{"x":${v}}}`,
            (v: string) => `{"spec":{"x":${v}}}`,
            (v: string) =>
              `{"adapter":"pullsecret","observed_generation":1,"observed_time":"2026-01-01T00:00:00Z","conditions":[],"data":{"x":${v}}}`,
          ),
        )
        .map(([depth, [open, close], wrap]) => wrap(nested(depth, open, close))),
      fc.string({ unit: 'binary' }),
    );
    const body = fc.oneof(jsonText, fc.uint8Array({ maxLength: 512 }));
    const target = fc.constantFrom<[string, string]>(
      ['POST', `${B}/clusters`],
      ['PATCH', `${B}/clusters/${clusterId}`],
      ['PUT', `${B}/clusters/${clusterId}/statuses`],
    );
    const contentType = fc.constantFrom(
      'application/json',
      'application/merge-patch+json',
      'text/plain',
      'application/json; charset=utf-8',
    );
    await fc.assert(
      fc.asyncProperty(target, body, contentType, async ([method, path], payload, type) => {
        assertClassified(await send(method, path, payload, type), `${method} ${path}`);
      }),
      { numRuns: 300 },
    );
    assert.equal((await fetch(`${api.baseUrl}/clusters/${clusterId}`)).status, 200, 'still serving');
  });
});
