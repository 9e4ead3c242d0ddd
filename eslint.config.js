// Lint rules: typescript-eslint's type-aware recommended set, plus a ban on console in production code
// (logs go through the structured logger so redaction applies everywhere), plus the boundaries of
// src/: each SDK is imported only in the folder of its adapter, and production code neither imports
// the dev stack (src/dev) nor a devDependency (the image has neither), and the folders of src/ form
// layers (LAYERS below, eslint-plugin-boundaries): a folder imports only folders below it. Formatting
// is Prettier's: no stylistic rule is enabled here (the sets above hold none), so the two cannot disagree.
import { readFileSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import boundariesPlugin from 'eslint-plugin-boundaries';

/** Each SDK and the one folder of src/ whose adapter may import it (tests and bench/ use them freely). */
const SDK_HOMES = [
  { folder: 'src/stores/gcp-secret-manager', packages: ['@google-cloud/secret-manager', 'google-gax'] },
  { folder: 'src/brokers/pubsub', packages: ['@google-cloud/pubsub', 'google-gax'] },
  { folder: 'src/brokers/rabbitmq', packages: ['amqplib'] },
  { folder: 'src/kube', packages: ['@kubernetes/client-node'] },
  { folder: 'src/stores/aws-secrets-manager', packages: ['@aws-sdk/*'] },
  { folder: 'src/stores/azure-key-vault', packages: ['@azure/*'] },
];
/** The folders (`a/, b/`) where an SDK package may be imported. */
const homesOf = (name) =>
  SDK_HOMES.filter((h) => h.packages.includes(name))
    .map((h) => `${h.folder}/`)
    .join(', ');
const { devDependencies } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
/** A relative import of src/dev from a file outside it (`../dev/x.js`, `../../dev/x.js`). */
const DEV_STACK = '^(\\.{1,2}/)+dev(/|$)';
/** The one production file that loads the dev stack, lazily, for `pull-secret dev`. */
const DEV_ENTRY = 'src/cli/dev.ts';

const LAZY_PACKAGE =
  'A package is not loaded with import() in production code: in the bundles a CommonJS package loaded that way has no named exports. Import it statically in a small module and load that module with import() (see src/config/yaml-parser.ts).';

/** `name` or `name/sub/path`; a scope wildcard (`@aws-sdk/*`) stands for every package of the scope. */
const packageRegex = (name) => `^${name.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace('/*', '/[^/]+')}(/|$)`;

/**
 * Import rules for one zone of src/: `home` is the SDK folder the files are in (or none), `zone` is
 * production code, the dev stack's entry, the dev stack itself, or a test.
 */
function boundaries(home, zone) {
  const production = zone === 'production' || zone === 'entry';
  // A package two SDKs share (google-gax: the transport of both Google clients) is allowed in both homes.
  const others = new Set(SDK_HOMES.filter((h) => h !== home).flatMap((h) => h.packages));
  const restricted = [...others]
    .filter((name) => home?.packages.includes(name) !== true)
    .map((name) => ({
      regex: packageRegex(name),
      message: `${name} is imported only in ${homesOf(name)}: use its adapter (SDKs stay in their folders).`,
    }));
  if (production) {
    restricted.push({
      regex: DEV_STACK,
      message: `Production code does not import the dev stack (src/dev): only ${DEV_ENTRY} loads it, with await import().`,
    });
    for (const name of Object.keys(devDependencies).filter((n) => !n.startsWith('@types/'))) {
      restricted.push({
        regex: packageRegex(name),
        message: `${name} is a devDependency: the production install and the image do not have it.`,
      });
    }
  }
  // Dynamic import() is not seen by no-restricted-imports: the same bans as selectors.
  const dynamic = restricted
    .filter((r) => !(zone === 'entry' && r.regex === DEV_STACK))
    .map((r) => ({
      selector: `ImportExpression[source.value=/${r.regex.replaceAll('/', '\\/')}/]`,
      message: r.message,
    }));
  // The bundles (scripts/bundle.mjs) give a dynamic import() of a CommonJS package its default export only.
  if (production)
    dynamic.push({ selector: 'ImportExpression[source.value=/^(?!\\.|node:)/]', message: LAZY_PACKAGE });
  return {
    'no-restricted-imports': ['error', { patterns: restricted }],
    'no-restricted-syntax': ['error', ...dynamic],
  };
}

/** Later entries win: the most specific zone of a file decides its import rules. */
const boundaryConfigs = [
  { files: ['src/**/*.ts'], rules: boundaries(undefined, 'production') },
  { files: [DEV_ENTRY], rules: boundaries(undefined, 'entry') },
  ...SDK_HOMES.map((home) => ({ files: [`${home.folder}/**/*.ts`], rules: boundaries(home, 'production') })),
  { files: ['src/dev/**/*.ts'], rules: boundaries(undefined, 'dev') },
  { files: ['src/**/*.test.ts'], rules: boundaries(undefined, 'test') },
  ...SDK_HOMES.map((home) => ({ files: [`${home.folder}/**/*.test.ts`], rules: boundaries(home, 'test') })),
];

/**
 * The layers of src/, from the bottom up: a folder imports only folders of the layers below its own,
 * never one of its own layer or above, so no two folders import each other. docs/architecture.md quotes
 * this list.
 */
const LAYERS = [
  { errors: 'PullSecretError, error codes and reasons, the text of server errors' },
  { util: 'small generic helpers: retry, deadlines, deep freeze, sanitising' },
  { pullsecret: 'the pull secret value: parsing, registry keys, redaction of credentials' },
  { config: 'the base of configuration: env parsing, problems, layering, YAML, single-section schemas' },
  { observability: 'logger, metrics registry and generic metric helpers, health server, process guard' },
  {
    events: 'the CloudEvents the adapter consumes',
    hyperfleet: 'the HyperFleet API client, its schemas and checks',
  },
  { stores: 'the store seam and the four stores (with the GCP store notifications)' },
  { kube: 'Kubernetes client, targets, Secrets, Jobs' },
  { brokers: 'RabbitMQ, Pub/Sub and the embedded broker' },
  { reconcile: 'the core: resolve a cluster once, the step contract, the outcome table, the pipeline' },
  { 'status-view': 'pull-secret status: the statuses read back from HyperFleet (admin shows them too)' },
  // Feature plug-ins: a feature may import one listed before it, never one after.
  { verification: 'registry login check of a pull secret before it is written' },
  { 'account-service': 'pull secret transfer from the account service' },
  { retention: 'disabling and destroying superseded secret versions' },
  { entitlements: 'entitlement certificate refreshes' },
  { shares: 'pull secret shares between clusters' },
  { admin: 'the admin API: tokens, audit, cluster state' },
  { job: 'the Job process of Job mode' },
  { adapter: 'the composition root: service wiring, executors, composite config, plug-in registration' },
  { cli: 'the pull-secret command line' },
  { dev: 'the dev stack: local HyperFleet, broker and demo (loaded lazily by src/cli/dev.ts only)' },
];
const FOLDERS = LAYERS.flatMap((layer) => Object.keys(layer));
/** The folders of the layers below `folder`'s. */
const below = (folder) =>
  LAYERS.slice(
    0,
    LAYERS.findIndex((layer) => folder in layer),
  ).flatMap((layer) => Object.keys(layer));

/**
 * A folder imports the folders below it. Imports of src/dev are
 * the dev-stack boundary's (above: production code does not import it but for one lazy entry), so that
 * a violation is reported once.
 */
const layerPolicies = () =>
  FOLDERS.map((folder) => ({
    from: { element: { type: folder } },
    allow: {
      to: {
        element: { types: { anyOf: [...below(folder), 'dev'] } },
      },
    },
  }));
const layerRule = [
  'error',
  {
    default: 'disallow',
    checkUnknownLocals: true,
    message:
      'src/{{from.type}}/ imports only folders of the layers below its own ' +
      '(LAYERS in eslint.config.js), not src/{{to.type}}/',
    policies: layerPolicies(),
  },
];

const layerConfigs = [
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    plugins: { boundaries: boundariesPlugin },
    settings: {
      'boundaries/elements': FOLDERS.map((folder) => ({ type: folder, pattern: `src/${folder}` })),
      'import/resolver': { './scripts/lint-resolver.cjs': {} },
      'boundaries/dependency-nodes': ['import', 'export', 'dynamic-import'],
      'boundaries/legacy-templates': false,
    },
    // A new folder of src/ takes its place in LAYERS first.
    rules: { 'boundaries/dependencies': layerRule, 'boundaries/no-unknown-files': 'error' },
  },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.pull-secret/**', '.tmp/**', '.runtimes/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  ...boundaryConfigs,
  ...layerConfigs,
  {
    files: ['**/*.test.ts', 'test/**', 'bench/**', 'scripts/**'],
    rules: {
      'no-console': 'off',
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: globals.node },
  },
  // CommonJS: the import resolver, which eslint-module-utils loads with require().
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
