import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseTokenState } from '../../src/admin/token-state.js';
import { baseEnv, runCli } from '../support/cli.js';
import { startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';

describe('pull-secret admin and token (CLI client)', () => {
  let stack: AdapterStack;
  let dir: string;
  let tokenFile: string;
  let server: string;
  const env = baseEnv();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-admin-cli-'));
    tokenFile = join(dir, 'admin-tokens.json');
    stack = await startAdapterStack({ admin: { enabled: true, port: 0, tokens: { file: tokenFile } } });
    server = `http://127.0.0.1:${stack.adapter.admin.server?.port ?? 0}`;
  });
  after(async () => {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('get and list print a table; --output json prints the server answer', async () => {
    const cluster = await stack.seedCluster();
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) =>
      s.conditions.some((c) => c.type === 'Available' && c.status === 'True'),
    );
    const got = await runCli(
      ['admin', 'get', cluster.id, '--server', server, '--token-file', tokenFile],
      env,
    );
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, /State: +healthy/);
    assert.match(got.stdout, /VERSION +STATE +CREATED\n1 +ENABLED/);
    const listed = await runCli(
      [
        'admin',
        'list',
        '--filter',
        'healthy',
        '--output',
        'json',
        '--server',
        server,
        '--token-file',
        tokenFile,
      ],
      env,
    );
    assert.equal(listed.code, 0, listed.stderr);
    const body = JSON.parse(listed.stdout) as { items: Array<{ id: string }> };
    assert.ok(body.items.some((i) => i.id === cluster.id));
  });

  it('reconcile shows the outcome; rollback of a cluster without versions is refused (409) with the reason', async () => {
    const cluster = await stack.seedCluster();
    const done = await runCli(
      ['admin', 'reconcile', cluster.id, '--server', server, '--token-file', tokenFile],
      env,
    );
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /Reconcile of .*: done/);
    assert.match(done.stdout, /Applied: True/);
    const rollback = await runCli(
      ['admin', 'rollback', cluster.id, '--server', server, '--token-file', tokenFile],
      env,
    );
    assert.equal(rollback.code, 1);
    assert.match(rollback.stderr, /refused rollback \(409\): SECRET_NOT_FOUND: /);
  });

  it('rollback --reason --expires-in pins (shown in the table and status -o wide); --release ends the pin', async () => {
    const cluster = await stack.seedCluster();
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => s.data?.secretVersion === '1');
    const patched = await stack.request('PATCH', `/clusters/${cluster.id}`, {
      spec: {
        ...cluster.spec,
        pullSecret: {
          data: (cluster.spec.pullSecret as { data: string }).data.replace(
            '}}',
            '},"b.example.com":{"auth":"YjpiYg=="}}',
          ),
        },
      },
    });
    assert.equal(patched.status, 200);
    await stack.publish({ id: cluster.id, generation: 2 });
    await stack.waitForStatus(cluster.id, (s) => s.data?.secretVersion === '2');
    const admin = (...args: string[]) =>
      runCli(['admin', 'rollback', cluster.id, ...args, '--server', server, '--token-file', tokenFile], env);
    const pinned = await admin('--reason', 'bad b.example.com', '--expires-in', '4h');
    assert.equal(pinned.code, 0, pinned.stderr);
    assert.match(pinned.stdout, /version 1 restored as version 3 \(updated\)/);
    assert.match(
      pinned.stdout,
      /Pinned by admin-api \(current token, 127\.0\.0\.1\) at \S+ until \S+: bad b\.example\.com/,
    );
    const status = await stack.waitForStatus(cluster.id, (s) => s.data?.pin !== undefined);
    assert.equal(status.conditions.find((c) => c.type === 'Applied')?.reason, 'RolledBackPinned');
    const wide = await runCli(['status', '-o', 'wide', '--api', stack.api.url], env);
    assert.equal(wide.code, 0, wide.stderr);
    assert.match(wide.stdout, /PIN/);
    assert.match(wide.stdout, / v1 until \S+Z /);
    const both = await admin('--release', '--reason', 'x');
    assert.equal(both.code, 2);
    const released = await admin('--release');
    assert.equal(released.code, 0, released.stderr);
    assert.match(released.stdout, /Rollback pin of \S+ released; reconcile: done/);
    const none = await admin('--release');
    assert.match(none.stdout, /had no rollback pin: nothing changed/);
  });

  it('clear messages and exit codes: 401 (1), connection refused (1), a missing argument (2)', async () => {
    const wrong = join(dir, 'wrong-token');
    await writeFile(wrong, 'bm90LXRoZS10b2tlbg==\n');
    const refused = await runCli(['admin', 'list', '--server', server, '--token-file', wrong], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refused the token \(401\)/);
    assert.ok(!refused.stderr.includes('bm90LXRoZS10b2tlbg=='));
    const down = await runCli(
      ['admin', 'list', '--server', 'http://127.0.0.1:1', '--token-file', tokenFile],
      env,
    );
    assert.equal(down.code, 1);
    assert.match(down.stderr, /connection refused/);
    const usage = await runCli(['admin', 'get', '--server', server, '--token-file', tokenFile], env);
    assert.equal(usage.code, 2);
  });

  it('a server that never answers: a timeout message, exit 1', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const hung = await runCli(
        [
          'admin',
          'list',
          '--server',
          `http://127.0.0.1:${port}`,
          '--token-file',
          tokenFile,
          '--timeout',
          '0.5',
        ],
        env,
      );
      assert.equal(hung.code, 1);
      assert.match(hung.stderr, /no answer within 500 ms/);
    } finally {
      silent.close();
    }
  });

  it('token show prints where the token is, never the token; token rotate rotates the file', async () => {
    const before = parseTokenState(await readFile(tokenFile, 'utf8'), 'test');
    const shown = await runCli(['token', 'show', '--file', tokenFile], env);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /current\.token/);
    assert.ok(!shown.stdout.includes(before.current.token) && !shown.stderr.includes(before.current.token));
    const rotated = await runCli(['token', 'rotate', '--file', tokenFile], env);
    assert.equal(rotated.code, 0, rotated.stderr);
    const afterState = parseTokenState(await readFile(tokenFile, 'utf8'), 'test');
    assert.equal(afterState.previous?.token, before.current.token);
    assert.ok(!rotated.stdout.includes(afterState.current.token));
    const neither = await runCli(['token', 'show'], env);
    assert.equal(neither.code, 2);
  });

  it('token rotate on a malformed file says what is wrong and how to mend it, not to run itself again', async () => {
    const bad = join(dir, 'bad-tokens.json');
    await writeFile(
      bad,
      JSON.stringify({ current: { token: 'c2VjcmV0LXRva2Vu', generatedAt: 'yesterday' } }),
      { mode: 0o600 },
    );
    const rotated = await runCli(['token', 'rotate', '--file', bad], baseEnv());
    assert.equal(rotated.code, 2, rotated.stderr);
    assert.match(
      rotated.stderr,
      /is malformed \(at [^)]*current\.generatedAt\); it must hold \{"current":\{"token":BASE64,"generatedAt":ISO-8601 time\}/,
    );
    assert.match(rotated.stderr, /or delete it and a new token is generated/);
    assert.ok(!rotated.stderr.includes('token rotate') && !rotated.stderr.includes('c2VjcmV0LXRva2Vu'));
  });
});
