import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baseEnv, runCli } from '../support/cli.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';
import { until } from '../support/until.js';

// A job stuck on a store that never answers ends as a failure the status reporter can read: at
// JOB_TIMEOUT (reason JobTimeout), or at SIGTERM (reason JobTerminated), exit 1 either way.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

let dir: string;
let silent: Server;
const sockets: Socket[] = [];
let endpoint: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ps-job-deadline-'));
  // Accepts connections and never says a word: the gRPC handshake never completes.
  silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const address = silent.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  endpoint = `127.0.0.1:${address.port}`;
});
after(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string>) =>
  baseEnv({
    CLUSTER_ID: 'cls-deadline',
    PULL_SECRET_DATA: VALID_PULL_SECRET,
    GCP_PROJECT_ID: 'deadline-test',
    SECRET_MANAGER_ENDPOINT: endpoint,
    SECRET_MANAGER_INSECURE: 'true',
    ...extra,
  });

async function resultFile(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
}

test(
  'a job stuck on an unreachable store ends at JOB_TIMEOUT with a failure result',
  { timeout: 120_000 },
  async () => {
    const resultsPath = join(dir, 'timeout.json');
    const result = await runCli(
      ['run-job', 'pull-secret'],
      env({ JOB_TIMEOUT: '2', GCP_CALL_TIMEOUT_MS: '600000', RESULTS_PATH: resultsPath }),
    );
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /^pull-secret: the job did not finish within JOB_TIMEOUT \(2 s\)$/m);
    const file = await resultFile(resultsPath);
    assert.deepEqual([file.status, file.reason, file.error_code], ['failure', 'JobTimeout', 'ABORTED']);
  },
);

test(
  'SIGTERM ends a job stuck on an unreachable store with a failure result',
  { timeout: 120_000 },
  async () => {
    const resultsPath = join(dir, 'sigterm.json');
    const before = sockets.length;
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'run-job', 'pull-secret'], {
      cwd: ROOT,
      env: env({ JOB_TIMEOUT: '600', GCP_CALL_TIMEOUT_MS: '600000', RESULTS_PATH: resultsPath }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    await until('the job to reach the store', () => sockets.length > before);
    child.kill('SIGTERM');
    assert.equal(await closed, 1, stderr);
    assert.match(stderr, /^pull-secret: the job was stopped by SIGTERM before it finished$/m);
    const file = await resultFile(resultsPath);
    assert.deepEqual([file.status, file.reason], ['failure', 'JobTerminated']);
  },
);

test('JOB_TIMEOUT that is not a positive whole number of seconds is a configuration error', async () => {
  const result = await runCli(['run-job', 'pull-secret'], env({ JOB_TIMEOUT: 'soon' }));
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /JOB_TIMEOUT/);
});
