import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LocalStore } from './local-store.js';

const ID = 'hyperfleet-cls-1-pull-secret';
const LABELS = { 'managed-by': 'hyperfleet', 'cluster-id': 'cls-1' };
const STORE_MODULE = pathToFileURL(join(import.meta.dirname, 'local-store.ts')).href;

/**
 * A separate Node process using the store: it prints `ready`, waits for a line on stdin (so all
 * children start their writes at the same moment), optionally creates the secret, adds versions,
 * and prints a JSON summary. With `forever`, it adds versions until killed.
 */
const CHILD = `
const [moduleUrl, dir, id, count, create, forever] = process.argv.slice(1);
const { LocalStore } = await import(moduleUrl);
const store = new LocalStore({ dir, lockTiming: { staleMs: 2000 } });
process.stdout.write('ready\\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
process.stdin.destroy();
const summary = { created: false, versions: [] };
if (create === 'true') summary.created = (await store.createSecret(id, ${JSON.stringify(LABELS)})) !== undefined;
for (let i = 0; forever === 'true' || i < Number(count); i++) {
  const info = await store.addVersion(id, Buffer.from('pid ' + process.pid + ' #' + i));
  summary.versions.push(info.version);
  if (forever === 'true') process.stdout.write('added ' + info.version + '\\n');
}
process.stdout.write(JSON.stringify(summary) + '\\n');
`;

interface Child {
  process: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

async function startChild(dir: string, count: number, create: boolean, forever = false): Promise<Child> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      import.meta.resolve('tsx'),
      '--input-type=module',
      '-e',
      CHILD,
      STORE_MODULE,
      dir,
      ID,
      String(count),
      String(create),
      String(forever),
    ],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  while (!stdout.includes('ready\n')) {
    const [code] = await Promise.race([once(child.stdout, 'data'), exited.then((c) => [`exit ${c}`])]);
    if (typeof code === 'string') throw new Error(`child ${code} before ready: ${stderr}`);
  }
  return { process: child, output: () => `${stdout}\n${stderr}`, exited };
}

function summaryOf(child: Child): { created: boolean; versions: string[] } {
  const line = child
    .output()
    .trim()
    .split('\n')
    .find((l) => l.startsWith('{'));
  assert.ok(line, `child printed no summary: ${child.output()}`);
  return JSON.parse(line) as { created: boolean; versions: string[] };
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'local-store-concurrency-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test(
  'processes racing on a fresh store agree on one key, one creator, and versions 1..N each exactly once',
  { timeout: 60_000 },
  async () => {
    await withDir(async (dir) => {
      const children = 6;
      const perChild = 12;
      const started = await Promise.all(
        Array.from({ length: children }, () => startChild(dir, perChild, true)),
      );
      for (const child of started) child.process.stdin?.write('go\n');
      const codes = await Promise.all(started.map((c) => c.exited));
      codes.forEach((code, i) => assert.equal(code, 0, started[i]?.output()));

      const summaries = started.map(summaryOf);
      assert.equal(summaries.filter((s) => s.created).length, 1, 'exactly one process created the secret');
      const reported = summaries
        .flatMap((s) => s.versions)
        .map(Number)
        .sort((a, b) => a - b);
      const expected = Array.from({ length: children * perChild }, (_, i) => i + 1);
      assert.deepEqual(reported, expected, 'every number handed out exactly once');

      // The parent reads every version with the key file the children generated between them.
      const store = new LocalStore({ dir });
      const described = await store.describe(ID);
      assert.deepEqual(
        described?.versions.map((v) => Number(v.version)).sort((a, b) => a - b),
        expected,
      );
      const payloads = new Set<string>();
      for (const n of expected) payloads.add((await store.accessVersion(ID, String(n))).data.toString());
      assert.equal(payloads.size, children * perChild, 'no version overwrote another');
    });
  },
);

test(
  'a writer killed mid-stream leaves a readable store that later writers continue',
  { timeout: 60_000 },
  async () => {
    await withDir(async (dir) => {
      const store = new LocalStore({ dir, lockTiming: { staleMs: 2000 } });
      await store.createSecret(ID, LABELS);
      for (let round = 0; round < 3; round++) {
        const child = await startChild(dir, 0, false, true);
        child.process.stdin?.write('go\n');
        // Let it commit a few versions, then kill it without warning at whatever step it is in.
        while ((child.output().match(/added/g) ?? []).length < 3 + round)
          await once(child.process.stdout!, 'data');
        child.process.kill('SIGKILL');
        await child.exited;

        const described = await store.describe(ID);
        const numbers = described?.versions.map((v) => Number(v.version)).sort((a, b) => a - b) ?? [];
        assert.deepEqual(
          numbers,
          Array.from({ length: numbers.length }, (_, i) => i + 1),
          'versions stay contiguous',
        );
        for (const n of numbers) await store.accessVersion(ID, String(n));
        // A lock the killed process held is taken over once stale, so this does not hang.
        const next = await store.addVersion(ID, Buffer.from(`after kill ${round}`));
        assert.equal(Number(next.version), numbers.length + 1);
      }
    });
  },
);
