// The store seam: everything about a store is declared in its own folder. Outside `src/stores/` no
// code compares a store kind by name, every descriptor agrees with the store it builds, and loading
// the registry (what every command does) loads no cloud SDK.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { storeFactories, STORE_KINDS } from '../../src/stores/registry.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Comparisons of a string literal naming a store kind: `x === 'gcp'`, `'local' !== y`, `case 'gcp':`,
 * and the tests by method: `kinds.includes('gcp')`, `set.has("aws")`, `kinds.indexOf('local')`.
 * A store kind may still appear as a value (a default, a test fixture); only comparisons are banned.
 */
function kindComparisons(text: string): string[] {
  const kinds = STORE_KINDS.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  const literal = `(?:'(?:${kinds})'|"(?:${kinds})"|\`(?:${kinds})\`)`;
  const method = `\\.(?:includes|has|indexOf|lastIndexOf|startsWith|endsWith)\\(\\s*${literal}\\s*[,)]`;
  const pattern = new RegExp(
    `[!=]==?\\s*${literal}|${literal}\\s*[!=]==?|\\bcase\\s+${literal}\\s*:|${method}`,
    'g',
  );
  return [...text.matchAll(pattern)].map((m) => m[0]);
}

/**
 * Comparisons that are not about store kinds. Each entry: file, the exact comparison, and why.
 */
const ALLOWED: ReadonlyArray<{ file: string; match: string; why: string }> = [
  {
    file: 'src/reconcile/preconditions.ts',
    match: '== "gcp"',
    why: "a CEL rule on the cluster's cloud provider, not a store kind",
  },
];

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name));
}

describe('no store kind is compared by name outside src/stores/', () => {
  test('the check finds a deliberate violation in every spelling', () => {
    const violations = [
      "if (kind === 'gcp') {",
      "const scoped = 'local' !== kind;",
      'switch (kind) { case "gcp": }',
      'kind == `local`',
      "if (!notifications.enabled || stores.includes('gcp')) return [];",
      'const gcp = kinds.has("gcp");',
      "kinds.indexOf( 'local' ) >= 0",
    ];
    for (const line of violations) assert.equal(kindComparisons(line).length, 1, line);
    assert.deepEqual(kindComparisons("store: { type: 'local' }, provider: 'gcp'"), []);
    assert.deepEqual(kindComparisons("new Set(['gcp', 'aws']).has(kind)"), []);
  });

  test('src/ outside src/stores/ holds none', async () => {
    const found: string[] = [];
    for (const file of await sourceFiles(join(ROOT, 'src'))) {
      const path = relative(ROOT, file).split('\\').join('/');
      if (path.startsWith('src/stores/')) continue;
      for (const match of kindComparisons(await readFile(file, 'utf8'))) {
        if (!ALLOWED.some((a) => a.file === path && a.match === match)) found.push(`${path}: ${match}`);
      }
    }
    assert.deepEqual(found, []);
  });
});

/** A valid value of each scope setting key a store may declare (by setting, not by store). */
const SAMPLE_SCOPE: Readonly<Record<string, string>> = {
  projectId: 'seam-project-1',
  accountId: '123456789012',
  region: 'us-east-1',
  vaultUrl: 'https://seam-vault.vault.azure.net',
};

describe('every store descriptor', () => {
  test('declares a payload limit equal to the store it builds, and quotas only with a scope', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ps-seam-'));
    try {
      for (const store of storeFactories()) {
        // Building a client touches neither disk nor network, so defaults are fine here.
        const scope = Object.fromEntries(
          (store.scope?.settingKeys ?? []).map((k) => [k, SAMPLE_SCOPE[k] ?? 'seam-project-1']),
        );
        const config = store.configSchema.parse(scope);
        const created = await store.create(config);
        assert.equal(created.maxPayloadBytes, store.maxPayloadBytes, store.kind);
        assert.equal(created.kind, store.kind);
        if (store.scope) assert.equal(created.location, store.scope.location(scope));
        await created.close();
        const metered = Object.values(store.quotas).some((figure) => figure !== undefined);
        assert.ok(!metered || store.scope !== undefined, `${store.kind}: quotas are per scope`);
        assert.ok(
          store.apiCalls.methods.length > 0 && store.apiCalls.codes.includes('OK'),
          `${store.kind}: API-call labels`,
        );
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('validate() checks the adapter settings without a scope value and never echoes one', () => {
    for (const store of storeFactories()) {
      assert.deepEqual(store.validate({}), [], `${store.kind}: no settings is valid`);
      const problems = store.validate({ 'no-such-setting': 'hunter2' });
      assert.ok(problems.length > 0, `${store.kind}: an unknown setting is refused`);
      assert.ok(problems.every((p) => !p.includes('hunter2')));
    }
  });

  test('loading the registry and the descriptors loads no cloud SDK', () => {
    const script = [
      "import { storeFactories } from './src/stores/registry.ts';",
      'storeFactories();',
      "const { createRequire } = await import('node:module');",
      'const loaded = Object.keys(createRequire(import.meta.url).cache);',
      'process.stdout.write(JSON.stringify(loaded.filter((p) => /google-gax|@google-cloud|@grpc|@aws-sdk|@smithy/.test(p))));',
    ].join('\n');
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), []);
  });
});
