import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { access, mkdtemp, readFile, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalStore } from '../../src/stores/local/index.js';
import { createKeyFile, keyId, readKeyFile } from '../../src/stores/local/key.js';
import { rotateStoreKey } from '../../src/stores/local/rotate-key.js';
import { SecretFiles } from '../../src/stores/local/secret-files.js';
import { baseEnv, runCli } from '../support/cli.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';

// Local store keys: a lost key file is never silently replaced, and `store rotate-key` re-encrypts
// every record crash-safely while the store stays readable.

const LABELS = { 'managed-by': 'hyperfleet', 'cluster-id': 'c1' };
const CLUSTER = '019466a0-8f8e-7abc-9def-0123456789ad';
let dir: string;
before(async () => (dir = await mkdtemp(join(tmpdir(), 'ps-store-keys-'))));
after(async () => rm(dir, { recursive: true, force: true }));

/** A store with `secrets` secrets of two versions each; returns the payload of each version. */
async function seed(storeDir: string, secrets: number): Promise<Map<string, string>> {
  const store = new LocalStore({ dir: storeDir });
  const expected = new Map<string, string>();
  for (let i = 0; i < secrets; i++) {
    const id = `secret-${i}`;
    await store.createSecret(id, LABELS);
    for (const n of [1, 2]) {
      const text = `payload ${i}.${n}`;
      const info = await store.addVersion(id, Buffer.from(text));
      expected.set(`${id}/${info.version}`, text);
    }
  }
  await store.close();
  return expected;
}

/** Every version decrypts to what was written, through a fresh store (a new process would see the same). */
async function assertReadable(storeDir: string, expected: Map<string, string>): Promise<void> {
  const store = new LocalStore({ dir: storeDir });
  for (const [ref, text] of expected) {
    const [id, version] = ref.split('/') as [string, string];
    assert.equal((await store.accessVersion(id, version)).data.toString(), text, ref);
  }
  await store.close();
}

async function keyIdsOnDisk(storeDir: string): Promise<Set<string>> {
  const files = new SecretFiles({ dir: storeDir });
  const ids = new Set<string>();
  for (const id of await files.listIds())
    for (const v of (await files.read(id))?.versions ?? []) ids.add(String(v.keyId));
  return ids;
}

test('a deleted key file is not replaced while encrypted secrets exist: exit 2, how to restore or rotate', async () => {
  const storeDir = join(dir, 'lost');
  const env = baseEnv({
    LOCAL_STORE_DIR: storeDir,
    CLUSTER_ID: CLUSTER,
    PULL_SECRET_DATA: VALID_PULL_SECRET,
  });
  assert.equal((await runCli(['run-job', 'pull-secret'], env)).code, 0);
  await unlink(join(storeDir, 'store.key'));

  const again = await runCli(['run-job', 'pull-secret'], env);
  assert.equal(again.code, 2, again.stderr);
  assert.match(again.stderr, /holds encrypted secret versions but its key file .*store\.key is missing/);
  assert.match(again.stderr, /restore the key file from a backup/);
  assert.match(again.stderr, /pull-secret store rotate-key/);
  await assert.rejects(access(join(storeDir, 'store.key')), { code: 'ENOENT' }, 'no new key was generated');

  const store = new LocalStore({ dir: storeDir });
  await assert.rejects(store.getSecret(`hyperfleet-${CLUSTER}-pull-secret`), { code: 'CONFIG_INVALID' });
});

test('an empty store still gets its key generated on first use', async () => {
  const store = new LocalStore({ dir: join(dir, 'fresh') });
  assert.equal(await store.getSecret('nothing'), undefined);
  assert.ok(await readKeyFile(join(dir, 'fresh', 'store.key')));
});

test('rotate-key re-encrypts every version under a new key; a store opened before keeps reading and writes under the new key', async () => {
  const storeDir = join(dir, 'rotate');
  const expected = await seed(storeDir, 3);
  const before = new LocalStore({ dir: storeDir });
  assert.equal((await before.accessVersion('secret-0', '1')).data.toString(), 'payload 0.1');
  const oldKey = await readKeyFile(join(storeDir, 'store.key'));

  const rotated = await runCli(['store', 'rotate-key'], baseEnv({ LOCAL_STORE_DIR: storeDir }));
  assert.equal(rotated.code, 0, rotated.stderr);
  const summary = JSON.parse(rotated.stdout) as Record<string, unknown>;
  assert.deepEqual(
    { ...summary, old_key_id: undefined, new_key_id: undefined },
    {
      rotated: true,
      secrets: 3,
      versions_reencrypted: 6,
      resumed: false,
      old_key_id: undefined,
      new_key_id: undefined,
    },
  );
  const newKey = await readKeyFile(join(storeDir, 'store.key'));
  assert.ok(oldKey && newKey && !newKey.equals(oldKey));
  assert.equal(summary.new_key_id, keyId(newKey));
  assert.deepEqual(await keyIdsOnDisk(storeDir), new Set([keyId(newKey)]));
  await assert.rejects(access(join(storeDir, 'store.key.next')), { code: 'ENOENT' });
  assert.doesNotMatch(
    rotated.stdout + rotated.stderr,
    new RegExp(newKey.toString('base64').slice(0, 16).replace(/[+/]/g, '.')),
  );

  // The long-lived instance loaded the old key only; it notices the change and goes on.
  assert.equal((await before.accessVersion('secret-2', '2')).data.toString(), 'payload 2.2');
  const added = await before.addVersion('secret-1', Buffer.from('after rotation'));
  expected.set(`secret-1/${added.version}`, 'after rotation');
  await before.close();
  assert.deepEqual(await keyIdsOnDisk(storeDir), new Set([keyId(newKey)]));
  await assertReadable(storeDir, expected);
});

test('during a rotation new versions go under the next key and every record reads under either key', async () => {
  const storeDir = join(dir, 'during');
  const expected = await seed(storeDir, 2);
  const next = await createKeyFile(join(storeDir, 'store.key.next'));
  assert.ok(next);
  const store = new LocalStore({ dir: storeDir });
  const info = await store.addVersion('secret-0', Buffer.from('written mid-rotation'));
  expected.set(`secret-0/${info.version}`, 'written mid-rotation');
  await store.close();
  await assertReadable(storeDir, expected);

  const result = await rotateStoreKey({ dir: storeDir });
  assert.equal(result.resumed, true);
  assert.equal(result.newKeyId, keyId(next));
  assert.equal(result.reencrypted, 4, 'the version already under the next key is left as it is');
  await assertReadable(storeDir, expected);
});

const ROTATE = `
const [moduleUrl, dir] = process.argv.slice(1);
const { rotateStoreKey } = await import(moduleUrl);
process.stdout.write('started\\n');
await rotateStoreKey({ dir });
process.stdout.write('done\\n');
`;

test(
  'a rotation killed at varying points leaves every record readable, and running it again finishes it',
  { timeout: 120_000 },
  async () => {
    const storeDir = join(dir, 'killed');
    const expected = await seed(storeDir, 40);
    const originalKey = await readKeyFile(join(storeDir, 'store.key'));
    for (let round = 0; round < 5; round++) {
      const child = spawn(
        process.execPath,
        [
          '--import',
          import.meta.resolve('tsx'),
          '--input-type=module',
          '-e',
          ROTATE,
          pathToFileURL(join(import.meta.dirname, '../../src/stores/local/rotate-key.ts')).href,
          storeDir,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const exited = once(child, 'exit');
      await once(child.stdout, 'data');
      await sleep(round * 15);
      child.kill('SIGKILL');
      await exited;
      await assertReadable(storeDir, expected);
    }
    const result = await rotateStoreKey({ dir: storeDir });
    const finalKey = await readKeyFile(join(storeDir, 'store.key'));
    assert.ok(finalKey && originalKey && !finalKey.equals(originalKey));
    assert.equal(result.newKeyId, keyId(finalKey));
    assert.deepEqual(await keyIdsOnDisk(storeDir), new Set([keyId(finalKey)]));
    await assertReadable(storeDir, expected);
    assert.ok((await readFile(join(storeDir, 'store.key'), 'utf8')).endsWith('\n'));
  },
);

test('rotate-key refuses a key given with LOCAL_STORE_KEY and a store without a key file (exit 2)', async () => {
  const withKey = await runCli(
    ['store', 'rotate-key'],
    baseEnv({ LOCAL_STORE_DIR: join(dir, 'k'), LOCAL_STORE_KEY: Buffer.alloc(32, 7).toString('base64') }),
  );
  assert.equal(withKey.code, 2);
  assert.match(withKey.stderr, /LOCAL_STORE_KEY/);
  const none = await runCli(['store', 'rotate-key'], baseEnv({ LOCAL_STORE_DIR: join(dir, 'none') }));
  assert.equal(none.code, 2);
  assert.match(none.stderr, /no key to rotate/);
  await assert.rejects(access(join(dir, 'none')), { code: 'ENOENT' }, 'nothing was created');
});
