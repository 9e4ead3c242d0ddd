import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { adminRequest } from '../../src/admin/admin-client.js';
import { serializeTokenState } from '../../src/admin/token-state.js';
import { CANARY_ADMIN_TOKEN, CANARY_PULL_SECRET, findCanary } from '../support/fixtures.js';
import { startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';

// The admin token is a credential: with the canary token current and the canary pull secret stored,
// no answer, log line or metric may hold either, whatever the caller sends.

let stack: AdapterStack;
let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ps-admin-leak-'));
  const tokenFile = join(dir, 'admin-tokens.json');
  await writeFile(
    tokenFile,
    serializeTokenState({ current: { token: CANARY_ADMIN_TOKEN, generatedAt: Date.now() } }),
    { mode: 0o600 },
  );
  stack = await startAdapterStack({
    admin: { enabled: true, port: 0, tokens: { file: tokenFile }, protectMetrics: true },
  });
});
after(async () => {
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
});

it('no admin token or pull secret byte in any answer, log line or metric', async () => {
  const server = `http://127.0.0.1:${stack.adapter.admin.server?.port ?? 0}`;
  const cluster = await stack.seedCluster({ pullSecret: { data: CANARY_PULL_SECRET } });
  const answers: string[] = [];
  const call = async (method: 'GET' | 'POST', path: string, token?: string) => {
    const a = await adminRequest({ server, method, path, token });
    answers.push(JSON.stringify(a.json), JSON.stringify(a.headers));
    return a;
  };
  assert.equal((await call('POST', `/clusters/${cluster.id}/reconcile`, CANARY_ADMIN_TOKEN)).status, 200);
  assert.equal((await call('GET', `/clusters/${cluster.id}`, CANARY_ADMIN_TOKEN)).status, 200);
  assert.equal((await call('GET', '/clusters', CANARY_ADMIN_TOKEN)).status, 200);
  // Near misses and a token sent where an id belongs.
  assert.equal((await call('GET', '/clusters', `${CANARY_ADMIN_TOKEN.slice(0, -2)}A=`)).status, 401);
  assert.equal(
    (await call('GET', `/clusters/${encodeURIComponent(CANARY_ADMIN_TOKEN)}`, CANARY_ADMIN_TOKEN)).status,
    400,
  );
  // A well-formed id that happens to be made of the token's characters: looked up, not found.
  assert.equal(
    (
      await call(
        'GET',
        `/clusters/${CANARY_ADMIN_TOKEN.toLowerCase().replace(/[^a-z0-9]/g, '')}`,
        CANARY_ADMIN_TOKEN,
      )
    ).status,
    404,
  );
  const metrics = await (
    await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`, {
      headers: { authorization: `Bearer ${CANARY_ADMIN_TOKEN}` },
    })
  ).text();
  assert.match(metrics, /pullsecret_/);
  for (const [what, text] of [
    ['answers', answers.join('\n')],
    ['logs', stack.logs.join('\n')],
    ['metrics', metrics],
  ] as const) {
    assert.equal(findCanary(text), undefined, `${what} hold a canary`);
  }
  assert.ok(
    stack.logs.some((l) => l.includes('"audit":true')),
    'the audit lines were written',
  );
});
