import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baseEnv, type CliResult } from '../support/cli.js';
import { CANARY_PULL_SECRET, findCanary } from '../support/fixtures.js';
import { describeStray } from '../../src/observability/process-guard.js';

// No crash, no raw stack trace: the job without Google credentials, and stray errors from any
// dependency, end in one classified line (and for the job, a result file and exit 1).

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const CANARY_TEXT = 's3cr3t-canary-7Q2v';

/** A preload that rejects a promise nobody handles once the code under test adds a SIGTERM listener. */
const STRAY_ON_SIGTERM_LISTENER = `data:text/javascript,${encodeURIComponent(
  `let done = false; process.on('newListener', (event) => { if (event === 'SIGTERM' && !done) { done = true; Promise.reject(new Error('token ${CANARY_TEXT}')); } });`,
)}`;

function run(args: string[], env: NodeJS.ProcessEnv, preload: string[] = []): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', ...preload.flatMap((p) => ['--import', p]), ...args],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const logs = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      resolve({ code, stdout, stderr, logs });
    });
  });
}

let dir: string;
before(() => (dir = mkdtempSync(join(tmpdir(), 'ps-guard-'))));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The upstream job's environment with the gcp store and no way to find Google credentials. */
function noCredentialsEnv(resultsPath: string): NodeJS.ProcessEnv {
  const home = mkdtempSync(join(dir, 'home-'));
  return baseEnv({
    HOME: home,
    SECRET_STORE: 'gcp',
    GCP_PROJECT_ID: 'customer-prod-12345',
    CLUSTER_ID: 'cls-no-credentials',
    PULL_SECRET_DATA: CANARY_PULL_SECRET,
    RESULTS_PATH: resultsPath,
  });
}

describe('job without Google credentials', () => {
  it('prints one pull-secret: line, writes its result file and exits 1 (no stray rejection, no stack)', async () => {
    const resultsPath = join(dir, 'no-credentials.json');
    const result = await run([MAIN, 'run-job', 'pull-secret'], noCredentialsEnv(resultsPath));
    assert.equal(result.code, 1, result.stderr);
    const lines = result.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(
      lines[0] ?? '',
      /^pull-secret: GCP Secret Manager AccessSecretVersion failed .*no usable Google credentials/,
    );
    assert.ok(
      !result.logs.some((l) => l.message === 'stray error caught by the process guard'),
      'the root cause leaves no stray rejection',
    );
    const file = JSON.parse(readFileSync(resultsPath, 'utf8')) as Record<string, unknown>;
    assert.equal(file.status, 'failure');
    assert.equal(file.reason, 'AuthenticationFailed');
    assert.equal(file.error_code, 'STORE_UNAUTHENTICATED');
    assert.equal(findCanary(result.stdout + result.stderr + JSON.stringify(file)), undefined);
  });
});

describe('Pub/Sub broker without Google credentials', () => {
  it('refuses to start with CONFIG_INVALID, and no stray rejection ends the process', async () => {
    const script = `
      import { createBroker } from ${JSON.stringify(new URL('../../src/brokers/registry.ts', import.meta.url).href)};
      const broker = await createBroker({ type: 'pubsub', projectId: 'proj-x', topic: 'topic', subscriptionId: 'sub', requestTimeoutMs: 2000 });
      const outcome = await broker.start(async () => 'ack').then(() => 'started', (err) => err.code + ': ' + err.message);
      await broker.stop();
      await new Promise((resolve) => setTimeout(resolve, 200));
      console.log(JSON.stringify({ outcome }));
    `;
    const result = await run(
      ['--input-type=module', '-e', script],
      baseEnv({ HOME: mkdtempSync(join(dir, 'home-')) }),
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(String(result.logs[0]?.outcome), /^CONFIG_INVALID: Pub\/Sub: no usable Google credentials/);
    assert.equal(result.stderr, '');
  });
});

describe('process guard', () => {
  it('turns a stray rejection in the job into one log line, a failure result file and exit 1', async () => {
    const resultsPath = join(dir, 'stray.json');
    const env = baseEnv({
      CLUSTER_ID: 'cls-stray',
      PULL_SECRET_DATA: CANARY_PULL_SECRET,
      LOCAL_STORE_DIR: join(dir, 'store'),
      RESULTS_PATH: resultsPath,
    });
    const result = await run([MAIN, 'run-job', 'pull-secret'], env, [STRAY_ON_SIGTERM_LISTENER]);
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stderr, 'pull-secret: unhandled promise rejection\n');
    const guard = result.logs.filter((l) => l.message === 'stray error caught by the process guard');
    assert.equal(guard.length, 1);
    assert.equal(guard[0]?.error_code, 'INTERNAL');
    assert.equal(guard[0]?.stray, 'unhandledRejection');
    const file = JSON.parse(readFileSync(resultsPath, 'utf8')) as Record<string, unknown>;
    assert.deepEqual([file.status, file.error_code], ['failure', 'INTERNAL']);
    assert.ok(!(result.stdout + result.stderr).includes(CANARY_TEXT), 'the stray error text is never echoed');
    assert.ok(!result.stderr.includes('    at '), 'no raw stack trace');
  });

  it('keeps a long-running command alive after a stray rejection', async () => {
    const script = `
      import { installProcessGuard } from ${JSON.stringify(new URL('../../src/observability/process-guard.ts', import.meta.url).href)};
      installProcessGuard({ log: (fields, message) => console.log(JSON.stringify({ ...fields, message })) });
      Promise.reject(Object.assign(new Error('token ${CANARY_TEXT}'), { code: 'ECONNRESET' }));
      setTimeout(() => console.log(JSON.stringify({ message: 'still running' })), 50);
    `;
    const result = await run(['--input-type=module', '-e', script], baseEnv());
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      result.logs.map((l) => [l.message, l.cause_code]),
      [
        ['stray error caught by the process guard', 'ECONNRESET'],
        ['still running', undefined],
      ],
    );
    assert.ok(!result.stdout.includes(CANARY_TEXT));
  });

  it('exits 1 after an uncaught exception, with one line and no stack', async () => {
    const script = `
      import { installProcessGuard } from ${JSON.stringify(new URL('../../src/observability/process-guard.ts', import.meta.url).href)};
      installProcessGuard({ log: (fields, message) => console.log(JSON.stringify({ ...fields, message })) });
      setTimeout(() => { throw new TypeError('token ${CANARY_TEXT}'); }, 0);
      setTimeout(() => console.log(JSON.stringify({ message: 'still running' })), 2000);
    `;
    const result = await run(['--input-type=module', '-e', script], baseEnv());
    assert.equal(result.code, 1);
    assert.deepEqual(
      result.logs.map((l) => [l.message, l.stray, l.cause_name]),
      [['stray error caught by the process guard', 'uncaughtException', 'TypeError']],
    );
    assert.equal(result.stderr, '');
  });

  it('describes a stray error by class, code and package, never by its text', () => {
    const error = Object.assign(new Error(`Could not load ${CANARY_TEXT}`), {
      code: 'a long free text code that could quote input',
    });
    error.stack = `Error: Could not load ${CANARY_TEXT}\n    at GoogleAuth.getApplicationDefaultAsync (/app/node_modules/google-auth-library/build/src/auth/googleauth.js:284:15)`;
    const report = describeStray('unhandledRejection', error);
    assert.deepEqual(report, {
      error_code: 'INTERNAL',
      error: 'unhandled promise rejection',
      retryable: false,
      stray: 'unhandledRejection',
      cause_name: 'Error',
      cause_origin: 'google-auth-library',
    });
    assert.equal(describeStray('unhandledRejection', 'text').cause_name, 'string');
    assert.ok(existsSync(MAIN));
  });
});
