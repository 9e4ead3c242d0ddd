// The job's bundle (scripts/bundle.mjs, run by `npm run build`; the `pull-secret` executable runs
// it for `run-job`): built here from src/cli/run-job-entry.ts into a temp dir and assembled into the
// image's layout (scripts/assemble-image-layout.mjs), run from there alone as the image's user (UID
// 1000 when the tests run as root), it must do what main.ts
// does, to the byte where it can: the same Secret Manager calls and outcome on the GCP test server, the
// same help, usage errors and exit codes, and a stray error from a bundled dependency still names the
// package it came from.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { baseEnv, finalLine, runCli, runNode, type CliResult } from '../support/cli.js';
import { buildBundle, imageUser, type BuiltBundle } from '../support/bundle.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import { describeStray } from '../../src/observability/process-guard.js';

const PROJECT = 'bundle-project';
let bundle: BuiltBundle;
let entry = '';
let server: SecretManagerTestServer;

before(async () => {
  bundle = await buildBundle(['run-job']);
  entry = bundle.entry('run-job');
  server = await startSecretManagerTestServer({ project: PROJECT });
});
after(async () => {
  await server?.stop();
  await bundle?.remove();
});

/** Runs the bundle's entry, or with `executable` the `pull-secret` executable next to it (it has no main.js to fall back on). */
const runBundle = (args: string[], env: NodeJS.ProcessEnv, executable = false): Promise<CliResult> =>
  runNode([executable ? bundle.executable : entry, ...args], env, imageUser());

const gcpEnv = (cluster: string) =>
  baseEnv({
    SECRET_STORE: 'gcp',
    GCP_PROJECT_ID: PROJECT,
    SECRET_MANAGER_ENDPOINT: server.address,
    SECRET_MANAGER_INSECURE: 'true',
    CLUSTER_ID: cluster,
    PULL_SECRET_DATA: VALID_PULL_SECRET,
  });

/** A log line without what differs from run to run. */
const stable = (line: Record<string, unknown> | undefined) => {
  const { timestamp: _t, duration_ms: _d, ...rest } = line ?? {};
  return rest;
};

describe('the job bundle', { timeout: 5 * 60_000 }, () => {
  test('creates, then finds nothing to do, with the same calls and log lines as main.ts', async () => {
    server.resetCalls();
    const created = await runBundle(['run-job', 'pull-secret'], gcpEnv('cls-bundle-1'));
    assert.equal(created.code, 0, created.stderr);
    assert.equal(finalLine(created)?.outcome, 'created');
    const createCalls = { ...server.calls };
    server.resetCalls();
    const fromMain = await runCli(['run-job', 'pull-secret'], gcpEnv('cls-bundle-2'));
    assert.equal(fromMain.code, 0, fromMain.stderr);
    assert.deepEqual(server.calls, createCalls, 'a first run makes the same calls');
    assert.deepEqual(
      created.logs.map((l) => [l.operation, l.message]),
      fromMain.logs.map((l) => [l.operation, l.message]),
    );

    server.resetCalls();
    const noop = await runBundle(['run-job', 'pull-secret'], gcpEnv('cls-bundle-2'), true);
    assert.equal(noop.code, 0, noop.stderr);
    const noopCalls = { ...server.calls };
    server.resetCalls();
    const noopMain = await runCli(['run-job', 'pull-secret'], gcpEnv('cls-bundle-2'));
    assert.deepEqual(noopCalls, server.calls, 'a no-op makes the same calls');
    assert.deepEqual(noop.logs.map(stable), noopMain.logs.map(stable));
    assert.equal(noop.stderr, '');
  });

  test('the executable runs run-job from the bundle: same help as main.ts', async () => {
    const [bundled, main] = await Promise.all([
      runBundle(['run-job', '--help'], baseEnv(), true),
      runCli(['run-job', '--help'], baseEnv()),
    ]);
    assert.equal(bundled.code, 0, bundled.stderr);
    assert.equal(bundled.stdout, main.stdout);
  });

  test('help, usage errors and configuration errors: same output, same exit codes', async () => {
    const cases: Array<[string[], NodeJS.ProcessEnv]> = [
      [['run-job', '--help'], baseEnv()],
      [['run-job'], baseEnv()],
      [['run-job', 'other-job'], baseEnv()],
      [['run-job', 'pull-secret', '--no-such-option'], baseEnv()],
      [['run-job', 'pull-secret'], baseEnv({ CLUSTER_ID: 'cls-bundle-3' })],
      [
        ['run-job', 'pull-secret'],
        {
          ...gcpEnv('cls-bundle-3'),
          SECRET_MANAGER_ENDPOINT: '127.0.0.1:1',
          GCP_CALL_TIMEOUT_MS: '2000',
          RETRY_MAX_ATTEMPTS: '1',
        },
      ],
    ];
    for (const [args, env] of cases) {
      const [bundled, main] = await Promise.all([runBundle(args, env), runCli(args, env)]);
      assert.equal(bundled.code, main.code, args.join(' '));
      assert.equal(bundled.stderr, main.stderr, args.join(' '));
      assert.deepEqual(bundled.logs.map(stable), main.logs.map(stable), args.join(' '));
      if (bundled.logs.length === 0) assert.equal(bundled.stdout, main.stdout, args.join(' '));
    }
  });

  test("a stray error raised in a bundled dependency still names the dependency's package", async () => {
    // A frame inside google-gax's code in the bundle: the chunk holding it, at the line and column of a
    // statement of google-gax's grpc.js (found by its text), as V8 would print it.
    const chunks = join(bundle.dir, 'bundle', 'chunks');
    for (const name of (await readdir(chunks)).filter((f) => f.endsWith('.js'))) {
      const lines = (await readFile(join(chunks, name), 'utf8')).split('\n');
      const line = lines.findIndex((l) => l.includes('googleProtoFilesDir='));
      if (line < 0) continue;
      const column = (lines[line] ?? '').indexOf('googleProtoFilesDir=');
      const error = new Error('boom');
      error.stack = `Error: boom\n    at Object.<anonymous> (${pathToFileURL(join(chunks, name)).href}:${line + 1}:${column + 1})`;
      assert.equal(describeStray('unhandledRejection', error).cause_origin, 'google-gax');
      error.stack = `Error: boom\n    at main (${pathToFileURL(entry).href}:1:1)`;
      assert.equal(describeStray('unhandledRejection', error).cause_origin, 'pull-secret');
      return;
    }
    assert.fail('google-gax is in no chunk of the bundle');
  });
});
