// A start-up that fails half-way stops what it had started: here the metrics port is taken, so the
// health server (started just before) must be closed again and its port free.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { validateAdapterConfig } from '../src/adapter/config.js';
import { startAdapter } from '../src/adapter/service.js';
import { startHyperFleetApiStandIn } from '../src/dev/hyperfleet-api/index.js';
import { createLogger } from '../src/observability/logger.js';

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
    const logger = createLogger({ level: 'warn', destination: new Writable({ write: (_chunk, _enc, done) => done() }) });
    await assert.rejects(startAdapter(config, logger));
    // The health server was started, then stopped when the metrics server failed: its port is free.
    await close(await listen(healthPort));
  } finally {
    await close(taken);
    await api.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
