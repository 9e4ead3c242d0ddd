import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstat, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseEnv, runCli } from '../support/cli.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';

// A job that will fail must fail before its first store or Kubernetes call: exit 2, one clear line,
// no secret stored, no manifest written. Each case below used to store a version and then fail.

let dir: string;
let n = 0;
before(async () => (dir = await mkdtemp(join(tmpdir(), 'ps-checks-first-'))));
after(async () => rm(dir, { recursive: true, force: true }));

async function entries(path: string): Promise<string[]> {
  return readdir(path, { recursive: true }).catch(() => []);
}

async function failsBeforeWriting(extra: Record<string, string>, stderr: RegExp): Promise<void> {
  const run = ++n;
  const storeDir = join(dir, `store-${run}`);
  const manifestDir = join(dir, `manifests-${run}`);
  const result = await runCli(
    ['run-job', 'pull-secret'],
    baseEnv({
      SECRET_STORE: 'local',
      LOCAL_STORE_DIR: storeDir,
      CLUSTER_ID: 'cls-checks-first',
      PULL_SECRET_DATA: VALID_PULL_SECRET,
      KUBERNETES_TARGET: 'manifests',
      MANIFEST_DIR: manifestDir,
      ...extra,
    }),
  );
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, stderr);
  assert.deepEqual(await entries(storeDir), [], 'nothing stored');
  assert.deepEqual(await entries(manifestDir), [], 'no manifest written');
}

test('a cluster id whose default namespace clusters-{id} would exceed 63 characters', async () => {
  const id = `c${'0'.repeat(56)}`;
  await failsBeforeWriting(
    { CLUSTER_ID: id },
    /is too long for the default namespace clusters-\{cluster-id\}.*at most 54/,
  );
});

test('MANAGEMENT_NAMESPACE that is not a DNS-1123 label', async () => {
  await failsBeforeWriting(
    { MANAGEMENT_NAMESPACE: '../../x' },
    /MANAGEMENT_NAMESPACE: must be a DNS-1123 label/,
  );
});

test('a valid pull secret with deep nesting in an unknown field gets one verdict up front', async () => {
  const deep = VALID_PULL_SECRET.trim().replace(/}$/, `,"x":${'['.repeat(5000)}${']'.repeat(5000)}}`);
  await failsBeforeWriting(
    { PULL_SECRET_DATA: deep },
    /^pull-secret: invalid pull secret format: nested deeper than 64 levels/m,
  );
});

test('RESULTS_PATH in a directory that does not exist', async () => {
  await failsBeforeWriting(
    { RESULTS_PATH: join(dir, 'no-such-dir', 'result.json') },
    /RESULTS_PATH: its directory .* does not exist; nothing was written/,
  );
});

test('the API target without any kubeconfig is a configuration error naming the ways out', async () => {
  const home = join(dir, 'empty-home');
  await failsBeforeWriting(
    { KUBERNETES_TARGET: '', MANAGEMENT_NAMESPACE: 'clusters-x', HOME: home },
    /no Kubernetes API connection configured: set KUBECONFIG.*KUBERNETES_TARGET=manifests/,
  );
});

test(
  'the adapter with kubernetes.target api and no kubeconfig refuses to start, exit 2',
  { timeout: 60_000 },
  async () => {
    const config = join(dir, 'adapter.yaml');
    await writeFile(
      config,
      'hyperfleetApi:\n  baseUrl: http://127.0.0.1:9/api/hyperfleet/v1\nbroker:\n  type: embedded\nkubernetes:\n  target: api\nserver:\n  healthPort: 0\n  metricsPort: 0\n',
    );
    const result = await runCli(['adapter', '--config', config], baseEnv({ HOME: join(dir, 'empty-home') }));
    assert.equal(result.code, 2, result.stderr);
    assert.match(
      result.stderr,
      /^pull-secret: no Kubernetes API connection configured: set KUBECONFIG.*kubernetes\.target: manifests\)$/m,
    );
  },
);

// Each of the job's own paths is checked before the first write (issue 30, item 4): before, each
// case stored a version first, /proc/x spun forever, and a FIFO, symlink or device was replaced.
test('MANIFEST_DIR that cannot be a directory: under /proc, /dev/null, a regular file', async () => {
  const file = join(dir, 'a-regular-file');
  await writeFile(file, 'x');
  await failsBeforeWriting(
    { MANIFEST_DIR: '/proc/x' },
    /MANIFEST_DIR: "\/proc\/x" cannot be created .*nothing was written/,
  );
  await failsBeforeWriting(
    { MANIFEST_DIR: '/dev/null' },
    /MANIFEST_DIR: "\/dev\/null" is not a directory; nothing was written/,
  );
  await failsBeforeWriting(
    { MANIFEST_DIR: file },
    /MANIFEST_DIR: .* is not a directory; nothing was written/,
  );
  await failsBeforeWriting(
    { MANIFEST_DIR: join(file, 'below') },
    /MANIFEST_DIR: .* is not a directory \(a file is on its path\); nothing was written/,
  );
});

test('RESULTS_PATH naming a directory or a device', async () => {
  await failsBeforeWriting(
    { RESULTS_PATH: dir },
    /RESULTS_PATH: .* is a directory, not a regular file; nothing was written/,
  );
  await failsBeforeWriting(
    { RESULTS_PATH: '/dev/null' },
    /RESULTS_PATH: "\/dev\/null" is a device, not a regular file; nothing was written/,
  );
});

test('RESULTS_PATH naming a FIFO or a symlink: refused, and left as it was', async () => {
  const fifo = join(dir, 'result.fifo');
  execFileSync('mkfifo', [fifo]);
  await failsBeforeWriting(
    { RESULTS_PATH: fifo },
    /RESULTS_PATH: .* is a FIFO, not a regular file; nothing was written/,
  );
  assert.equal((await lstat(fifo)).isFIFO(), true);
  const target = join(dir, 'symlink-target.json');
  await writeFile(target, 'keep');
  const link = join(dir, 'result-link.json');
  await symlink(target, link);
  await failsBeforeWriting(
    { RESULTS_PATH: link },
    /RESULTS_PATH: .* is a symbolic link, not a regular file; nothing was written/,
  );
  assert.equal((await lstat(link)).isSymbolicLink(), true);
  assert.equal(await readFile(target, 'utf8'), 'keep');
});
