// A start-up that fails half-way stops what it had started: here the metrics port is taken, so the
// health server (started just before) must be closed again and its port free; and a part that
// fails before the servers (the account service CA file) stops the watches started before it, so
// the process ends by itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { validateAdapterConfig } from '../../src/adapter/config.js';
import { startAdapter } from '../../src/adapter/service.js';
import { startHyperFleetApiStandIn } from '../../src/dev/hyperfleet-api/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { startKubernetesTestServer } from '../servers/kubernetes/server.js';
import { baseEnv } from '../support/cli.js';

const listen = (port: number): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
const close = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));
const portOf = (server: Server): number => (server.address() as { port: number }).port;

test('a start-up that fails at the metrics server closes the health server it had started', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-start-failure-'));
  const api = await startHyperFleetApiStandIn({});
  const taken = await listen(0);
  // A free port for the health server: bound, read, released.
  const probe = await listen(0);
  const healthPort = portOf(probe);
  await close(probe);
  try {
    const config = validateAdapterConfig({
      hyperfleetApi: { baseUrl: api.url, timeoutMs: 2000 },
      broker: { type: 'embedded' },
      store: { type: 'local', settings: { dir: join(dir, 'store') } },
      kubernetes: { target: 'manifests', manifestDir: join(dir, 'manifests') },
      server: { healthPort, metricsPort: portOf(taken), host: '127.0.0.1', drainSeconds: 1 },
    });
    const logger = createLogger({
      level: 'warn',
      destination: new Writable({ write: (_chunk, _enc, done) => done() }),
    });
    await assert.rejects(startAdapter(config, logger));
    // The health server was started, then stopped when the metrics server failed: its port is free.
    await close(await listen(healthPort));
  } finally {
    await close(taken);
    await api.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a start-up that fails after the watches stop them: the adapter process exits by itself', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ps-start-failure-'));
  const kube = await startKubernetesTestServer();
  try {
    const file = join(dir, 'adapter.yaml');
    // The Secret informer and the share controller watch the test server; the account service CA
    // file is missing, which fails the start after both have started.
    await writeFile(
      file,
      [
        'hyperfleetApi: { baseUrl: "http://127.0.0.1:1" }',
        'broker: { type: embedded }',
        `store: { type: local, settings: { dir: ${JSON.stringify(join(dir, 'store'))} } }`,
        `kubernetes: { target: api, kubeconfig: ${JSON.stringify(kube.kubeconfigPath)} }`,
        'shares: { enabled: true }',
        `accountService: { baseUrl: "https://127.0.0.1:1", caFile: ${JSON.stringify(join(dir, 'missing-ca.pem'))} }`,
        'server: { healthPort: 0, metricsPort: 0, host: 127.0.0.1 }',
        '',
      ].join('\n'),
    );
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url)),
        'adapter',
        '--config',
        file,
      ],
      {
        env: baseEnv(),
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // A watch left running keeps the process alive: then it is killed here and the test fails.
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    clearTimeout(guard);
    assert.equal(code, 2, `the adapter did not exit by itself (stderr: ${stderr})`);
    assert.match(stderr, /cannot read the account service CA file/);
  } finally {
    await kube.close();
    await rm(dir, { recursive: true, force: true });
  }
});
