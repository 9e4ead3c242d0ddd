import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, it } from 'node:test';
import { adminRequest } from '../../src/admin/admin-client.js';
import { startAdminServer, type RunningAdminServer } from '../../src/admin/admin-server.js';
import { createLogger } from '../../src/observability/logger.js';
import { generateTestPki } from '../servers/kubernetes/tls.js';

let dir: string;
let server: RunningAdminServer;
const logs: string[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ps-admin-tls-reload-'));
  const pki = await generateTestPki(await mkdtemp(join(dir, 'a-')));
  await writeFile(join(dir, 'tls.crt'), pki.certPem);
  await writeFile(join(dir, 'tls.key'), pki.keyPem);
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger({ level: 'info', destination: sink });
  server = await startAdminServer({
    host: '127.0.0.1',
    port: 0,
    tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') },
    tlsPollMs: 20,
    handler: (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
    logger,
  });
});
after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

it('picks up new certificate files on its own when they change', async () => {
  const url = `https://127.0.0.1:${server.port}`;
  const next = await generateTestPki(await mkdtemp(join(dir, 'b-')));
  await writeFile(join(dir, 'tls.key'), next.keyPem);
  await writeFile(join(dir, 'tls.crt'), next.certPem);
  // Poll until the new certificate is served (no fixed sleep: each attempt opens a fresh connection).
  for (let i = 0; ; i++) {
    const ok = await adminRequest({ server: url, method: 'GET', path: '/clusters', ca: next.caPem }).then(
      (a) => a.status === 200,
      () => false,
    );
    if (ok) break;
    assert.ok(i < 500, 'the new certificate was never served');
    await sleep(20);
  }
  assert.ok(logs.some((l) => l.includes('Admin API certificate reloaded')));
});
