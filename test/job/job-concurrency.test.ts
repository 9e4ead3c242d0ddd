import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { LocalStore } from '../../src/stores/local/index.js';
import { pushSecret } from '../../src/stores/push.js';
import { baseEnv, finalLine, runCli } from '../support/cli.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';

// Many `run-job` processes for one cluster at once, and jobs killed with SIGKILL at random points,
// on the embedded local store: exactly one version per distinct content, nothing left that blocks
// the next run.

const CLUSTER = '019466a0-8f8e-7abc-9def-0123456789ac';
const SECRET_ID = `hyperfleet-${CLUSTER}-pull-secret`;
const OTHER_PULL_SECRET = VALID_PULL_SECRET.replace('test@example.com', 'ops@example.com');
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const PROCESSES = 20;

let dir: string;
before(async () => (dir = await mkdtemp(join(tmpdir(), 'ps-job-concurrency-'))));
after(async () => rm(dir, { recursive: true, force: true }));

function env(storeDir: string, data: string) {
  return baseEnv({ LOCAL_STORE_DIR: storeDir, CLUSTER_ID: CLUSTER, PULL_SECRET_DATA: data });
}

async function versionsOf(storeDir: string): Promise<{ version: string; data: string }[]> {
  const store = new LocalStore({ dir: storeDir });
  try {
    const described = await store.describe(SECRET_ID);
    assert.ok(described, 'the secret exists');
    const out = [];
    for (const v of described.versions)
      out.push({
        version: v.version,
        data: (await store.accessVersion(SECRET_ID, v.version)).data.toString(),
      });
    return out;
  } finally {
    await store.close();
  }
}

test(
  `${PROCESSES} concurrent jobs with the same data: exactly one version, one "created", the rest "unchanged"`,
  { timeout: 240_000 },
  async () => {
    const storeDir = join(dir, 'same');
    const results = await Promise.all(
      Array.from({ length: PROCESSES }, () =>
        runCli(['run-job', 'pull-secret'], env(storeDir, VALID_PULL_SECRET)),
      ),
    );
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    const outcomes = results.map((r) => finalLine(r)?.outcome);
    const versions = await versionsOf(storeDir);
    console.log(`versions observed: ${versions.length}; outcomes: ${JSON.stringify(countBy(outcomes))}`);
    assert.equal(versions.length, 1);
    assert.equal(outcomes.filter((o) => o === 'created').length, 1);
    assert.equal(outcomes.filter((o) => o === 'unchanged').length, PROCESSES - 1);
  },
);

test(
  `${PROCESSES} concurrent jobs with two datas: the newest version is one of them and every version decrypts`,
  { timeout: 240_000 },
  async () => {
    const storeDir = join(dir, 'two');
    const datas = [VALID_PULL_SECRET, OTHER_PULL_SECRET];
    const results = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) =>
        runCli(['run-job', 'pull-secret'], env(storeDir, datas[i % 2] as string)),
      ),
    );
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    const versions = await versionsOf(storeDir);
    console.log(`versions observed with two datas: ${versions.length}`);
    assert.ok(
      datas.includes((versions[0] as { data: string }).data),
      'the newest version holds one of the two datas',
    );
    for (const v of versions)
      assert.ok(datas.includes(v.data), `version ${v.version} decrypts to one of the datas`);
    // A new version only when the content differs from the one before it.
    for (let i = 1; i < versions.length; i++)
      assert.notEqual(versions[i]?.data, versions[i - 1]?.data, 'no two consecutive versions are alike');
  },
);

test(
  'jobs killed with SIGKILL at varying points leave nothing that blocks or duplicates the next run',
  { timeout: 240_000 },
  async () => {
    const storeDir = join(dir, 'killed');
    for (let round = 0; round < 10; round++) {
      const data = round % 2 === 0 ? VALID_PULL_SECRET : OTHER_PULL_SECRET;
      const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'run-job', 'pull-secret'], {
        cwd: ROOT,
        env: env(storeDir, data),
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // From "before the store is touched" to "somewhere in the middle of the write".
      await sleep(300 + round * 120);
      child.kill('SIGKILL');
      await exited;

      const next = await runCli(['run-job', 'pull-secret'], env(storeDir, data));
      assert.equal(next.code, 0, next.stderr);
      const versions = await versionsOf(storeDir);
      assert.equal(versions[0]?.data, data, `round ${round}: the newest version holds this round's data`);
      for (let i = 1; i < versions.length; i++)
        assert.notEqual(versions[i]?.data, versions[i - 1]?.data, `round ${round}: no duplicate version`);
    }
    const leftovers = (await readdir(join(storeDir, 'locks'))).filter((name) => !name.startsWith('.'));
    assert.deepEqual(leftovers, [], 'no lock is left behind');
  },
);

/** A writer that adds versions of alternating content as fast as it can (mostly inside the lock) until killed. */
const WRITER = `
const [moduleUrl, dir, id] = process.argv.slice(1);
const { LocalStore } = await import(moduleUrl);
const store = new LocalStore({ dir });
if (await store.getSecret(id) === undefined) await store.createSecret(id, { 'managed-by': 'hyperfleet', 'cluster-id': id.slice(11, -12) });
process.stdout.write('ready\\n');
for (let i = 0; ; i++) await store.addVersion(id, Buffer.from('writer ' + (i % 2)));
`;

test(
  'a writer killed inside its lock: the next push takes the lock over at once (no staleness wait) and the next job adds no duplicate',
  { timeout: 240_000 },
  async () => {
    const storeDir = join(dir, 'killed-in-lock');
    const storeModule = pathToFileURL(join(import.meta.dirname, '../../src/stores/local/index.ts')).href;
    let locksLeftBehind = 0;
    for (let round = 0; round < 10; round++) {
      const child = spawn(
        process.execPath,
        [
          '--import',
          import.meta.resolve('tsx'),
          '--input-type=module',
          '-e',
          WRITER,
          storeModule,
          storeDir,
          SECRET_ID,
        ],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await new Promise((resolve) => child.stdout.once('data', resolve));
      await sleep(50 + round * 20);
      child.kill('SIGKILL');
      await exited;
      // No owner file, or one the kill cut short while it was written: the lock has no provable holder.
      const owner = await readFile(join(storeDir, 'locks', `${SECRET_ID}.lock`, 'owner.json'), 'utf8').then(
        (text) => {
          try {
            return (JSON.parse(text) as { pid: number }).pid;
          } catch {
            return undefined;
          }
        },
        () => undefined,
      );
      if (owner !== undefined) {
        assert.equal(owner, child.pid, 'the lock left behind names the killed writer');
        locksLeftBehind += 1;
      }

      // With an owner recorded, staleness would free the lock only after 60 s and the wait gives up after 3 s:
      // success proves the dead holder was recognized. A kill between the lock's mkdir and its owner file
      // (a few system calls) leaves a lock only staleness frees, so that round keeps the default timing.
      const store = new LocalStore({
        dir: storeDir,
        ...(owner === undefined ? {} : { lockTiming: { staleMs: 60_000, waitMs: 3_000 } }),
      });
      const data = round % 2 === 0 ? VALID_PULL_SECRET : OTHER_PULL_SECRET;
      const labels = { 'managed-by': 'hyperfleet', 'cluster-id': CLUSTER };
      await pushSecret(
        store,
        { secretId: SECRET_ID, labels, payload: Buffer.from(data) },
        { retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } },
      );
      await store.close();
      const count = (await versionsOf(storeDir)).length;
      const job = await runCli(['run-job', 'pull-secret'], env(storeDir, data));
      assert.equal(job.code, 0, job.stderr);
      assert.equal(
        finalLine(job)?.outcome,
        'unchanged',
        `round ${round}: the job found the version already there`,
      );
      assert.equal((await versionsOf(storeDir)).length, count, `round ${round}: no duplicate version`);
    }
    console.log(`rounds whose killed writer left its lock behind: ${locksLeftBehind} of 10`);
    assert.ok(locksLeftBehind > 0, 'at least one kill landed inside the lock');
  },
);

function countBy(values: unknown[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[String(v)] = (out[String(v)] ?? 0) + 1;
  return out;
}
