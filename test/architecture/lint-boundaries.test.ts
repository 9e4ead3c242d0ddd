// The import boundaries of eslint.config.js, through the ESLint Node API with the project's own
// configuration: each deliberate violation, linted as a file at a path in src/, is reported, and the
// imports the code base makes today are not. Two kinds: SDKs and the dev stack (no-restricted-*), and
// the layers of src/ (eslint-plugin-boundaries: a folder imports only folders of the layers below it). The probes are not on disk, so the type-aware rules (which
// need the file in the TypeScript project, and have nothing to say about imports) are switched off.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BOUNDARY_RULES = new Set([
  'no-restricted-imports',
  'no-restricted-syntax',
  'boundaries/dependencies',
  'boundaries/no-unknown-files',
]);

let eslint: ESLint;

/** The boundary messages ESLint gives `code` as the file `path` (other rules are not looked at). */
async function boundaryMessages(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${path}` });
  assert.ok(result, 'a lint result');
  assert.equal(result.messages.filter((m) => m.fatal === true).length, 0, JSON.stringify(result.messages));
  return result.messages
    .filter((m) => BOUNDARY_RULES.has(m.ruleId ?? ''))
    .map((m) => `${m.ruleId}: ${m.message}`);
}

const refused = async (path: string, code: string, expected: RegExp) => {
  const messages = await boundaryMessages(path, code);
  assert.equal(messages.length, 1, `${path}: ${code}\n${messages.join('\n')}`);
  assert.match(messages[0] ?? '', expected);
};
const allowed = async (path: string, code: string) =>
  assert.deepEqual(await boundaryMessages(path, code), [], `${path}: ${code}`);

describe('lint: import boundaries', { timeout: 5 * 60_000 }, () => {
  before(() => {
    eslint = new ESLint({ cwd: ROOT, overrideConfig: [tseslint.configs.disableTypeChecked] });
  });

  test('an SDK outside its folder is refused, statically, as a type, and with import()', async () => {
    await refused(
      'src/adapter/lint-probe.ts',
      "import { SecretManagerServiceClient } from '@google-cloud/secret-manager';\nexport const c = SecretManagerServiceClient;\n",
      /^no-restricted-imports: .*@google-cloud\/secret-manager is imported only in src\/stores\/gcp-secret-manager\//,
    );
    await refused(
      'src/reconcile/lint-probe.ts',
      "import type { KubeConfig } from '@kubernetes/client-node';\nexport type K = KubeConfig;\n",
      /^no-restricted-imports: .*@kubernetes\/client-node is imported only in src\/kube\//,
    );
    // (In a test: production code may not load any package with import(), see below.)
    await refused(
      'src/adapter/lint-probe.test.ts',
      "export const load = () => import('amqplib');\n",
      /^no-restricted-syntax: amqplib is imported only in src\/brokers\/rabbitmq\//,
    );
    await refused(
      'src/stores/local/lint-probe.ts',
      "export { GoogleError } from 'google-gax';\n",
      /google-gax is imported only in src\/stores\/gcp-secret-manager\//,
    );
    await refused(
      'src/brokers/rabbitmq/lint-probe.ts',
      "import { PubSub } from '@google-cloud/pubsub';\nexport const p = PubSub;\n",
      /@google-cloud\/pubsub is imported only in src\/brokers\/pubsub\//,
    );
    await refused(
      'src/kube/lint-probe.ts',
      "import '@aws-sdk/client-secrets-manager';\n",
      /@aws-sdk\/\* is imported only in src\/stores\/aws-secrets-manager\//,
    );
    await refused(
      'src/stores/gcp-secret-manager/lint-probe.ts',
      "import '@azure/keyvault-secrets';\n",
      /@azure\/\* is imported only in src\/stores\/azure-key-vault\//,
    );
    // Tests in src/ are held to the same SDK boundaries.
    await refused(
      'src/adapter/lint-probe.test.ts',
      "import 'google-gax';\n",
      /google-gax is imported only in/,
    );
  });

  test('each SDK is allowed in its own folder, and everywhere in test/', async () => {
    await allowed(
      'src/stores/gcp-secret-manager/lint-probe.ts',
      "import { SecretManagerServiceClient } from '@google-cloud/secret-manager';\nimport { GoogleError } from 'google-gax';\nexport const c = [SecretManagerServiceClient, GoogleError];\n",
    );
    await allowed(
      'src/kube/lint-probe.test.ts',
      "import { KubeConfig } from '@kubernetes/client-node';\nexport const k = KubeConfig;\n",
    );
    await allowed(
      'src/brokers/pubsub/lint-probe.ts',
      "import { PubSub } from '@google-cloud/pubsub';\nexport const p = PubSub;\n",
    );
    await allowed(
      'src/brokers/rabbitmq/lint-probe.ts',
      "import * as amqp from 'amqplib';\nexport const a = amqp;\n",
    );
    await allowed(
      'src/brokers/rabbitmq/lint-probe.test.ts',
      "export const load = () => import('amqplib');\n",
    );
    await allowed(
      'src/stores/aws-secrets-manager/lint-probe.ts',
      "import '@aws-sdk/client-secrets-manager';\n",
    );
    await allowed('src/stores/azure-key-vault/lint-probe.ts', "import '@azure/keyvault-secrets';\n");
    await allowed(
      'test/lint-probe.test.ts',
      "import { PubSub } from '@google-cloud/pubsub';\nimport * as amqp from 'amqplib';\nexport const p = [PubSub, amqp];\n",
    );
  });

  test('production code imports neither the dev stack nor a devDependency', async () => {
    await refused(
      'src/adapter/lint-probe.ts',
      "import { startDevStack } from '../dev/stack.js';\nexport const s = startDevStack;\n",
      /^no-restricted-imports: .*Production code does not import the dev stack \(src\/dev\)/,
    );
    await refused(
      'src/stores/local/lint-probe.ts',
      "export const load = () => import('../../dev/stack.js');\n",
      /^no-restricted-syntax: Production code does not import the dev stack/,
    );
    await refused(
      'src/adapter/lint-probe.ts',
      "import { Ajv } from 'ajv';\nexport const a = Ajv;\n",
      /^no-restricted-imports: .*ajv is a devDependency/,
    );
    await refused(
      'src/kube/lint-probe.ts',
      "import { Deployment } from 'kubernetes-models/apps/v1';\nexport const d = Deployment;\n",
      /kubernetes-models is a devDependency/,
    );
    // The dev stack's entry loads it only lazily.
    await refused(
      'src/cli/dev.ts',
      "import { startDevStack } from '../dev/stack.js';\nexport const s = startDevStack;\n",
      /Production code does not import the dev stack/,
    );
    await allowed('src/cli/dev.ts', "export const load = () => import('../dev/stack.js');\n");
  });

  test('the dev stack and tests may use the dev stack and devDependencies, not SDKs', async () => {
    await allowed(
      'src/dev/lint-probe.ts',
      "import { Ajv } from 'ajv';\nimport { parse } from 'yaml';\nexport const a = [Ajv, parse];\n",
    );
    await allowed(
      'src/adapter/lint-probe.test.ts',
      "import fc from 'fast-check';\nimport { parseDuration } from '../dev/duration.js';\nexport const x = [fc, parseDuration];\n",
    );
    await refused(
      'src/dev/lint-probe.ts',
      "import * as amqp from 'amqplib';\nexport const a = amqp;\n",
      /amqplib is imported only in src\/brokers\/rabbitmq\//,
    );
  });

  test('a production dependency is allowed anywhere in src/', async () => {
    await allowed(
      'src/adapter/lint-probe.ts',
      "import { z } from 'zod';\nimport { parse } from 'yaml';\nexport const x = [z, parse];\n",
    );
  });

  test('production code loads a package statically: import() of a package is refused, of a module or node: builtin allowed', async () => {
    const lazy = /^no-restricted-syntax: A package is not loaded with import\(\) in production code/;
    await refused(
      'src/config/lint-probe.ts',
      "export const load = async () => (await import('yaml')).parse;\n",
      lazy,
    );
    await refused(
      'src/kube/lint-probe.ts',
      "export const load = () => import('@kubernetes/client-node');\n",
      lazy,
    );
    await allowed(
      'src/config/lint-probe.ts',
      "export const load = async () => [(await import('./yaml-parser.js')).parseYaml, (await import('node:fs')).readFileSync];\n",
    );
    await allowed(
      'src/config/lint-probe.test.ts',
      "export const load = async () => (await import('yaml')).parse;\n",
    );
  });
});

/** The folders of src/ (each a layer's folder) with one production module of each to import. */
function folderModules(): Map<string, string> {
  const modules = new Map<string, string>();
  for (const entry of readdirSync(`${ROOT}src`, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const file = readdirSync(`${ROOT}src/${entry.name}`)
      .sort()
      .find((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    if (file !== undefined) modules.set(entry.name, file.replace(/\.ts$/, '.js'));
  }
  return modules;
}

describe('lint: layers of src/', { timeout: 5 * 60_000 }, () => {
  before(() => {
    eslint = new ESLint({ cwd: ROOT, overrideConfig: [tseslint.configs.disableTypeChecked] });
  });

  test('an import of a folder above is refused: statically, as a type, re-exported and with import()', async () => {
    const expected = /^boundaries\/dependencies: src\/util\/ imports only .*, not src\/adapter\/$/;
    await refused(
      'src/util/lint-probe.ts',
      "import { loadAdapterConfig } from '../adapter/config.js';\nexport const l = loadAdapterConfig;\n",
      expected,
    );
    await refused(
      'src/util/lint-probe.ts',
      "import type { AdapterConfig } from '../adapter/config.js';\nexport type A = AdapterConfig;\n",
      expected,
    );
    await refused(
      'src/util/lint-probe.ts',
      "export { loadAdapterConfig } from '../adapter/config.js';\n",
      expected,
    );
    await refused(
      'src/util/lint-probe.ts',
      "export const load = () => import('../adapter/config.js');\n",
      expected,
    );
    // A feature plug-in imports no feature listed after it, the core none at all.
    await refused(
      'src/verification/lint-probe.ts',
      "import '../retention/plan.js';\n",
      /src\/verification\/ imports only .*, not src\/retention\/$/,
    );
    await refused('src/stores/lint-probe.ts', "import '../kube/client.js';\n", /not src\/kube\/$/);
  });

  test('a folder missing from the layer order is refused', async () => {
    await refused('src/lint-probe-folder/x.ts', 'export const x = 1;\n', /^boundaries\/no-unknown-files: /);
  });

  test('a folder of the same layer is refused (so no two folders import each other)', async () => {
    await refused(
      'src/events/lint-probe.ts',
      "import '../hyperfleet/types.js';\n",
      /src\/events\/ .*, not src\/hyperfleet\/$/,
    );
    await refused(
      'src/hyperfleet/lint-probe.ts',
      "import '../events/cluster-event.js';\n",
      /not src\/events\/$/,
    );
  });

  test('an import of a folder below, or within the folder, is allowed', async () => {
    await allowed(
      'src/kube/lint-probe.ts',
      [
        "import { PullSecretError } from '../errors/index.js';",
        "import type { SecretStore } from '../stores/store.js';",
        "import { parseEnv } from '../config/env.js';",
        "import { x } from './client.js';",
        'export const k = [PullSecretError, parseEnv, x];',
        'export type S = SecretStore;',
      ].join('\n'),
    );
    await allowed('src/dev/lint-probe.ts', "import '../cli/program.js';\nimport '../adapter/service.js';\n");
    await allowed('src/cli/dev.ts', "export const load = () => import('../dev/stack.js');\n");
    // Tests may reach any folder they test.
    await allowed('src/config/lint-probe.test.ts', "import '../adapter/config.js';\n");
  });

  test('of every two folders, at most one imports the other', async () => {
    const modules = folderModules();
    const imports = async (from: string, to: string) =>
      (await boundaryMessages(`src/${from}/lint-probe.ts`, `import '../${to}/${modules.get(to)}';\n`))
        .length === 0;
    const twoWay: string[] = [];
    const folders = [...modules.keys()];
    for (const [i, a] of folders.entries()) {
      for (const b of folders.slice(i + 1)) {
        if ((await imports(a, b)) && (await imports(b, a))) twoWay.push(`${a}<->${b}`);
      }
    }
    assert.deepEqual(twoWay, []);
  });
});
