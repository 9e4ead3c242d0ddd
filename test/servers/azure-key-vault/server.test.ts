// The Key Vault test server's own rules, spoken to over raw HTTPS (no SDK), so a rule the store
// relies on is proven of the server itself: authentication, api-version, versions, soft delete.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import {
  KEY_VAULT_RESOURCE,
  MAX_VALUE_BYTES,
  startKeyVaultTestServer,
  type KeyVaultTestServer,
} from './index.js';

let server: KeyVaultTestServer;
let token = '';
const API = 'api-version=2025-07-01';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  auth = true,
): Promise<Answer> {
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${server.url}${path}`,
      {
        method,
        ca: server.caPem,
        headers: {
          ...(auth ? { authorization: `Bearer ${token}` } : {}),
          ...(text === undefined
            ? {}
            : {
                'content-type':
                  typeof body === 'string' ? 'application/x-www-form-urlencoded' : 'application/json',
              }),
          ...headers,
        },
      },
      (res) => {
        let data = '';
        res.on('data', (c: Buffer) => (data += c.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: data === '' ? {} : (JSON.parse(data) as Record<string, unknown>),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const errorCode = (a: Answer) => (a.body.error as { code?: string } | undefined)?.code;
const innerCode = (a: Answer) =>
  (a.body.error as { innererror?: { code?: string } } | undefined)?.innererror?.code;

function tokenForm(overrides: Record<string, string> = {}): string {
  return new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: server.clientId,
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    client_assertion: server.assertion,
    scope: `${KEY_VAULT_RESOURCE}/.default`,
    ...overrides,
  }).toString();
}

before(async () => {
  server = await startKeyVaultTestServer();
  const answer = await call('POST', `/${server.tenantId}/oauth2/v2.0/token`, tokenForm(), {}, false);
  assert.equal(answer.status, 200);
  token = answer.body.access_token as string;
});
after(() => server.stop());

test('no token: 401 with the Key Vault challenge naming the authority and the resource', async () => {
  const answer = await call('GET', `/secrets/x/?${API}`, undefined, {}, false);
  assert.equal(answer.status, 401);
  assert.equal(
    answer.headers['www-authenticate'],
    `Bearer authorization="${server.url}/${server.tenantId}", resource="${KEY_VAULT_RESOURCE}"`,
  );
  assert.equal(server.challenges, 1);
  assert.equal(server.totalCalls, 0, 'a challenge is not an authorized call');
});

test('token endpoint: the federated assertion, the client id and a .default scope are checked; the audience too', async () => {
  const config = await call(
    'GET',
    `/${server.tenantId}/v2.0/.well-known/openid-configuration`,
    undefined,
    {},
    false,
  );
  assert.equal(config.body.token_endpoint, `${server.url}/${server.tenantId}/oauth2/v2.0/token`);
  const bads: Array<Record<string, string>> = [
    { client_assertion: 'forged' },
    { client_id: 'someone-else' },
    { grant_type: 'password' },
    { scope: 'openid' },
  ];
  for (const bad of bads) {
    const answer = await call('POST', `/${server.tenantId}/oauth2/v2.0/token`, tokenForm(bad), {}, false);
    assert.equal(answer.status, 400, JSON.stringify(bad));
  }
  const other = await call(
    'POST',
    `/${server.tenantId}/oauth2/v2.0/token`,
    tokenForm({ scope: 'https://storage.azure.com/.default' }),
    {},
    false,
  );
  const wrongAudience = await call(
    'GET',
    `/secrets/x/?${API}`,
    undefined,
    { authorization: `Bearer ${other.body.access_token as string}` },
    false,
  );
  assert.equal(wrongAudience.status, 401, 'a token for another resource is refused');
});

test('api-version is required and checked', async () => {
  assert.equal((await call('GET', '/secrets/x/')).status, 400);
  const old = await call('GET', '/secrets/x/?api-version=2016-10-01');
  assert.deepEqual([old.status, errorCode(old)], [400, 'BadParameter']);
});

test('versions: set creates, get reads the newest, a disabled newest answers 403 SecretDisabled, the list holds every version', async () => {
  const first = await call('PUT', `/secrets/app-1?${API}`, {
    value: 'one',
    tags: { a: 'b' },
    contentType: 'application/json',
  });
  assert.equal(first.status, 200);
  assert.equal(first.body.value, 'one');
  const firstId = String(first.body.id).split('/').at(-1) as string;
  assert.match(firstId, /^[0-9a-f]{32}$/);
  const second = await call('PUT', `/secrets/app-1?${API}`, { value: 'two', attributes: { enabled: false } });
  const secondId = String(second.body.id).split('/').at(-1) as string;
  const latest = await call('GET', `/secrets/app-1/?${API}`);
  assert.deepEqual(
    [latest.status, errorCode(latest), innerCode(latest)],
    [403, 'Forbidden', 'SecretDisabled'],
  );
  assert.equal((await call('GET', `/secrets/app-1/${firstId}?${API}`)).body.value, 'one');
  const list = await call('GET', `/secrets/app-1/versions?${API}&maxresults=1`);
  assert.equal((list.body.value as unknown[]).length, 1);
  assert.match(String(list.body.nextLink), /\$skiptoken=1/);
  assert.equal(
    'value' in ((list.body.value as Array<Record<string, unknown>>)[0] ?? {}),
    false,
    'lists never carry values',
  );
  const enabled = await call('PATCH', `/secrets/app-1/${secondId}?${API}`, { attributes: { enabled: true } });
  assert.equal(enabled.status, 200);
  assert.equal((await call('GET', `/secrets/app-1?${API}`)).body.value, 'two');
  assert.equal((await call('GET', `/secrets/missing/?${API}`)).status, 404);
});

test('rules: names, at most 15 tags, the value size limit', async () => {
  assert.equal((await call('PUT', `/secrets/bad_name?${API}`, { value: 'x' })).status, 400);
  assert.equal((await call('PUT', `/secrets/${'a'.repeat(128)}?${API}`, { value: 'x' })).status, 400);
  const tags = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`t${i}`, 'v']));
  assert.equal((await call('PUT', `/secrets/tags-1?${API}`, { value: 'x', tags })).status, 400);
  assert.equal(
    (await call('PUT', `/secrets/big-1?${API}`, { value: 'x'.repeat(MAX_VALUE_BYTES + 1) })).status,
    400,
  );
  assert.equal(
    (await call('PUT', `/secrets/big-1?${API}`, { value: 'x'.repeat(MAX_VALUE_BYTES) })).status,
    200,
  );
});

test('soft delete: the name is held (409) until recovered or purged', async () => {
  await call('PUT', `/secrets/gone-1?${API}`, { value: 'x', tags: { owner: 'me' } });
  const deleted = await call('DELETE', `/secrets/gone-1?${API}`);
  assert.equal(deleted.status, 200);
  assert.equal(deleted.body.recoveryId, `${server.url}/deletedsecrets/gone-1`);
  assert.equal((await call('GET', `/secrets/gone-1/?${API}`)).status, 404);
  const reuse = await call('PUT', `/secrets/gone-1?${API}`, { value: 'y' });
  assert.deepEqual([reuse.status, innerCode(reuse)], [409, 'ObjectIsDeletedButRecoverable']);
  assert.deepEqual((await call('GET', `/deletedsecrets/gone-1?${API}`)).body.tags, { owner: 'me' });
  assert.equal((await call('POST', `/deletedsecrets/gone-1/recover?${API}`)).status, 200);
  assert.equal((await call('GET', `/secrets/gone-1/?${API}`)).body.value, 'x');
  await call('DELETE', `/secrets/gone-1?${API}`);
  assert.equal((await call('DELETE', `/deletedsecrets/gone-1?${API}`)).status, 204);
  assert.equal(
    (await call('PUT', `/secrets/gone-1?${API}`, { value: 'y' })).status,
    200,
    'purged: the name is free',
  );
});

test('missing name: every call the store makes, as the recordings of the live service answer it', async () => {
  // GetSecretVersions of a name with no secret is 200 with an empty page (recording "can list secret versions (non existing)").
  const list = await call('GET', `/secrets/never-1/versions?${API}`);
  assert.deepEqual([list.status, list.body], [200, { value: [], nextLink: null }]);
  const answers = await Promise.all([
    call('GET', `/secrets/never-1/?${API}`),
    call('GET', `/secrets/never-1/${'0'.repeat(32)}?${API}`),
    call('PATCH', `/secrets/never-1/${'0'.repeat(32)}?${API}`, { attributes: { enabled: false } }),
    call('DELETE', `/secrets/never-1?${API}`),
    call('GET', `/deletedsecrets/never-1?${API}`),
    call('POST', `/deletedsecrets/never-1/recover?${API}`),
  ]);
  assert.deepEqual(
    answers.map((a) => [a.status, errorCode(a)]),
    Array.from({ length: 6 }, () => [404, 'SecretNotFound']),
  );
});

test('soft-deleted name: not listed, not read, not set (409); its deleted form is read and recovered', async () => {
  await call('PUT', `/secrets/gone-2?${API}`, { value: 'x', tags: { owner: 'me' } });
  await call('DELETE', `/secrets/gone-2?${API}`);
  const list = await call('GET', `/secrets/gone-2/versions?${API}`);
  assert.deepEqual([list.status, list.body], [200, { value: [], nextLink: null }]);
  assert.deepEqual(
    [
      (await call('GET', `/secrets/gone-2/?${API}`)).status,
      (await call('DELETE', `/secrets/gone-2?${API}`)).status,
    ],
    [404, 404],
  );
  const set = await call('PUT', `/secrets/gone-2?${API}`, { value: 'y' });
  assert.deepEqual(
    [set.status, errorCode(set), innerCode(set)],
    [409, 'Conflict', 'ObjectIsDeletedButRecoverable'],
  );
  assert.equal((await call('GET', `/deletedsecrets/gone-2?${API}`)).status, 200);
});

test('disabled version: get is 403 SecretDisabled; list, update and a new set still work', async () => {
  const first = await call('PUT', `/secrets/off-1?${API}`, { value: 'x', attributes: { enabled: false } });
  const id = String(first.body.id).split('/').at(-1) as string;
  const read = await call('GET', `/secrets/off-1/${id}?${API}`);
  assert.deepEqual([read.status, errorCode(read), innerCode(read)], [403, 'Forbidden', 'SecretDisabled']);
  const listed = (await call('GET', `/secrets/off-1/versions?${API}`)).body.value as Array<{
    attributes: { enabled: boolean };
  }>;
  assert.deepEqual(
    listed.map((v) => v.attributes.enabled),
    [false],
  );
  assert.equal((await call('PATCH', `/secrets/off-1/${id}?${API}`, { tags: { a: 'b' } })).status, 200);
  assert.equal((await call('PUT', `/secrets/off-1?${API}`, { value: 'y' })).status, 200);
  assert.equal((await call('GET', `/secrets/off-1/?${API}`)).body.value, 'y');
});

test('faults: 429 with Retry-After, and a write applied before its answer is lost', async () => {
  server.injectFault({ operation: 'GetSecret', status: 429, retryAfter: 3 });
  const throttled = await call('GET', `/secrets/app-1/?${API}`);
  assert.deepEqual(
    [throttled.status, throttled.headers['retry-after'], errorCode(throttled)],
    [429, '3', 'Throttled'],
  );
  const writes = server.writes;
  server.injectFault({ operation: 'SetSecret', drop: true, afterApply: true });
  await assert.rejects(call('PUT', `/secrets/lost-1?${API}`, { value: 'x' }));
  assert.equal(server.writes, writes + 1, 'the write happened');
  assert.equal((await call('GET', `/secrets/lost-1/?${API}`)).body.value, 'x');
  assert.ok((server.calls.get('SetSecret') ?? 0) > 0);
});
