// The documentation may only promise what the code does: quoted error messages exist in src/,
// metric names are exported, the configuration reference matches the schema both ways, and the
// status contract lists exactly the reasons the code emits.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { adapterConfigSchema } from '../../src/adapter/config.js';
import { envFor } from '../../src/stores/config-env.js';
import { hyperfleetVariables } from '../../src/config/hyperfleet-env.js';
import { hyperfleetBrokerKeys } from '../../src/config/hyperfleet-broker.js';
import { buildStatusReport } from '../../src/reconcile/status-report.js';
import type { WorkOutcome, WorkTarget } from '../../src/reconcile/outcome.js';
import { ERROR_CODES, failureReason, PullSecretError, type ErrorCode } from '../../src/errors/index.js';
import { JOB_ENV } from '../../src/job/config.js';
import { KUBERNETES_TARGET_ENV } from '../../src/config/kubernetes-env.js';
import { AdapterMetrics as Metrics } from '../../src/adapter/metrics.js';
import { storeConfigSchema, storeEnv, STORE_KINDS } from '../../src/stores/registry.js';

/** Variables the AWS SDK reads (credentials chain, region), named in the docs next to ours. */
const AWS_SDK_VARIABLES = [
  'AWS_REGION',
  'AWS_ROLE_ARN',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_EC2_METADATA_DISABLED',
  'AWS_ACCOUNT_ID',
];

/** Environment variable → config path of every override the adapter reads. */
const ENV_OVERRIDES = Object.fromEntries(
  Object.entries(envFor('adapter')).map(([name, v]) => [name, v.path]),
);

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const doc = (name: string) => readFileSync(join(ROOT, 'docs', name), 'utf8');
const DOCS = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));

/** Every non-test source file of src/, with `'a' + 'b'` string concatenations joined. */
function sourceText(): string {
  const files = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
  );
  return files
    .map((f) => readFileSync(join(ROOT, 'src', f), 'utf8').replace(/(['`])\s*\+\s*(['`])/g, ''))
    .join('\n');
}

/** Backticked tokens of a markdown text (code spans of one or two backticks). */
function codeSpans(text: string): string[] {
  return [...text.matchAll(/(`+)([^`].*?)\1/g)].map((m) => (m[2] as string).trim());
}

describe('docs/troubleshooting.md', () => {
  const headings = [...doc('troubleshooting.md').matchAll(/^### (`+) ?(.+?) ?\1$/gm)].map(
    (m) => m[2] as string,
  );

  test('quotes enough messages to be useful', () => {
    assert.ok(headings.length >= 40, `${headings.length} entries`);
  });

  test('every quoted message exists in src/ (the parts between {placeholders})', () => {
    const source = sourceText();
    const missing: string[] = [];
    for (const message of headings) {
      // Punctuation next to a placeholder often belongs to an interpolation (` (${detail}).`), so it is trimmed.
      const pieces = message
        .split(/\{[^}]*\}/)
        .map((p) => p.replace(/^[^A-Za-z0-9`]+|[^A-Za-z0-9`.]+$/g, ''))
        .filter((p) => p.length >= 6);
      assert.ok(
        pieces.some((p) => p.length >= 10),
        `"${message}" needs a fixed part of 10 characters or more to be checked`,
      );
      for (const piece of pieces) if (!source.includes(piece)) missing.push(`"${piece}" of "${message}"`);
    }
    assert.deepEqual(missing, []);
  });

  test('the check catches a message that does not exist', () => {
    assert.ok(!sourceText().includes('GCP Secret Manager exploded'));
  });
});

describe('metrics named in the docs', () => {
  test('every pullsecret_ metric named in any doc is exported (histogram suffixes allowed)', async () => {
    const exported = new Set<string>();
    for (const m of await new Metrics().registry.getMetricsAsJSON()) {
      exported.add(m.name);
      if (String(m.type) === 'histogram')
        for (const s of ['_bucket', '_sum', '_count']) exported.add(m.name + s);
    }
    const named = DOCS.flatMap((file) =>
      [...doc(file).matchAll(/\bpullsecret_[a-z0-9_]*[a-z0-9]\b/g)].map((m) => ({ file, name: m[0] })),
    );
    const unknown = named
      .filter(({ name }) => !exported.has(name) && name !== 'pullsecret_process')
      .map(({ file, name }) => `${file}: ${name}`);
    assert.deepEqual(unknown, []);
    assert.ok(named.length > 10);
  });

  test('the runbook lists every metric of the service', async () => {
    const runbook = doc('runbook.md');
    const own = (await new Metrics({ defaultMetrics: false }).registry.getMetricsAsJSON()).map((m) => m.name);
    assert.deepEqual(
      own.filter((name) => !runbook.includes(`| \`${name}\` |`)),
      [],
    );
  });
});

/** The parts of zod 4's schema definitions the walk below reads. */
interface ZodDef {
  type: string;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  in?: unknown;
  options?: unknown[];
  element?: unknown;
}

/** Dotted key paths of a zod schema; arrays as `key[]`, unions merged. */
function schemaPaths(schema: unknown, prefix: string): string[] {
  const def = (schema as { _zod?: { def?: ZodDef } })._zod?.def;
  switch (def?.type) {
    case 'object':
      return Object.entries(def.shape ?? {}).flatMap(([key, child]) => {
        const path = prefix === '' ? key : `${prefix}.${key}`;
        return [path, ...schemaPaths(child, path)];
      });
    case 'default':
    case 'optional':
    case 'nullable':
    case 'prefault':
    case 'readonly':
    case 'catch':
      return schemaPaths(def.innerType, prefix);
    case 'pipe':
      return schemaPaths(def.in, prefix);
    case 'union':
      return [...new Set((def.options ?? []).flatMap((o) => schemaPaths(o, prefix)))];
    case 'array':
      return schemaPaths(def.element, `${prefix}[]`);
    default:
      return [];
  }
}

/** Read by `DefaultAzureCredential` itself, documented next to the Azure store. */
const AZURE_IDENTITY_VARIABLES = [
  'AZURE_CLIENT_ID',
  'AZURE_TENANT_ID',
  'AZURE_FEDERATED_TOKEN_FILE',
  'AZURE_AUTHORITY_HOST',
];

describe('docs/configuration.md', () => {
  const spans = new Set(codeSpans(doc('configuration.md')));
  // `onApiCall` is a code hook, not something a file can set.
  const storePaths = STORE_KINDS.flatMap((kind) =>
    schemaPaths(storeConfigSchema(kind), 'store.settings'),
  ).filter((p) => !p.endsWith('.onApiCall'));
  const keys = [...schemaPaths(adapterConfigSchema, ''), ...storePaths];
  const envNames = [
    ...Object.keys(ENV_OVERRIDES),
    ...Object.keys(JOB_ENV),
    ...Object.keys(KUBERNETES_TARGET_ENV),
    ...STORE_KINDS.flatMap((k) => Object.keys(storeEnv(k))),
  ];

  test("covers every key of the adapter config schema and of each store's settings", () => {
    assert.ok(keys.length > 50);
    assert.deepEqual(
      keys.filter((k) => !spans.has(k)),
      [],
    );
  });

  test('covers every environment override, with the key it sets, and every job variable', () => {
    const text = doc('configuration.md');
    for (const [name, path] of Object.entries(ENV_OVERRIDES))
      assert.ok(text.includes(`| \`${name}\` | \`${path}\` |`), `${name} → ${path}`);
    assert.deepEqual(
      envNames.filter((n) => !spans.has(n)),
      [],
    );
  });

  test('names no key or variable that does not exist', () => {
    const tops = Object.keys((adapterConfigSchema as unknown as { shape: Record<string, unknown> }).shape);
    // The hyperfleet-broker file's own keys (and its name) are documented next to ours.
    const known = new Set([...keys, ...hyperfleetBrokerKeys(), 'broker.yaml']);
    const stale = [...spans].filter(
      (s) => tops.some((t) => s.startsWith(`${t}.`)) && /^[\w.[\]]+$/.test(s) && !known.has(s),
    );
    assert.deepEqual(stale, []);
    const library = new Set([
      'GOOGLE_APPLICATION_CREDENTIALS',
      'METADATA_SERVER_DETECTION',
      'PUBSUB_EMULATOR_HOST',
      'KUBECONFIG',
      'GOOGLE_CLOUD_PROJECT',
      'NODE_EXTRA_CA_CERTS',
      ...AWS_SDK_VARIABLES,
      ...AZURE_IDENTITY_VARIABLES,
    ]);
    const variables = [...spans].filter((s) => /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(s));
    const hyperfleet = new Set(hyperfleetVariables());
    assert.deepEqual(
      variables.filter((v) => !envNames.includes(v) && !library.has(v) && !hyperfleet.has(v)),
      [],
    );
  });
});

/** Every reason `buildStatusReport` can put into a condition, found by building every kind of outcome. */
function emittedReasons(): Set<string> {
  const target: WorkTarget = {
    store: 'gcp',
    provider: '*',
    settings: { projectId: 'p-123456' },
    secretName: 's',
    namespace: 'ns',
    kubernetesSecretName: 'k',
  };
  const job = { target, jobName: 'j', jobNamespace: 'hyperfleet-system' };
  const errors = (Object.keys(ERROR_CODES) as ErrorCode[]).map((code) => new PullSecretError(code, 'x'));
  const outcomes: WorkOutcome[] = [
    ...(['created', 'updated', 'unchanged'] as const).map((outcome): WorkOutcome => ({
      kind: 'applied',
      target,
      result: { outcome, secretPath: 'p', secretName: 's', dryRun: false },
    })),
    // A rollback pin holds (docs/retention.md): Applied says so.
    {
      kind: 'applied',
      target,
      result: {
        outcome: 'unchanged',
        secretPath: 'p',
        secretName: 's',
        dryRun: false,
        pin: { sourceVersion: '1', by: 'b', at: 't' },
      },
    },
    { kind: 'skipped', precondition: 'p', message: 'm' },
    ...errors.map((error): WorkOutcome => ({ kind: 'failed', error, target })),
    { kind: 'job-running', ...job },
    { kind: 'job-succeeded', ...job },
    { kind: 'job-failed', ...job, message: 'm' },
    ...(['retained', 'deleted', 'absent'] as const).map((cloud): WorkOutcome => ({
      kind: 'finalized',
      target,
      kubernetesRemoved: true,
      cloud,
    })),
    ...errors.map((error): WorkOutcome => ({ kind: 'finalize-failed', target, error })),
  ];
  return new Set(
    outcomes.flatMap((o) =>
      buildStatusReport(o, 1).conditions.flatMap((c) => (c.reason === undefined ? [] : [c.reason])),
    ),
  );
}

describe('docs/status-contract.md', () => {
  const text = doc('status-contract.md');
  const pascal = new Set(codeSpans(text).filter((s) => /^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)*$/.test(s)));
  const CONDITIONS = new Set(['Applied', 'Available', 'Health', 'Finalized']);
  const STATUSES = new Set(['True', 'False', 'Unknown']);

  test('every PascalCase reason it names is one the code emits', () => {
    const emitted = emittedReasons();
    const source = sourceText();
    // The job's result file adds its success reasons (src/job/); they are literals there.
    const resultFile = (r: string) => source.includes(`'${r}'`) && /SecretUnchanged|DryRunSucceeded/.test(r);
    const unknown = [...pascal].filter(
      (r) => !CONDITIONS.has(r) && !STATUSES.has(r) && !emitted.has(r) && !resultFile(r),
    );
    assert.deepEqual(unknown, []);
  });

  test('every reason the code emits is documented, failure reasons included', () => {
    const failures = (Object.keys(ERROR_CODES) as ErrorCode[]).map(failureReason);
    const undocumented = [...new Set([...emittedReasons(), ...failures])].filter((r) => !pascal.has(r));
    assert.deepEqual(undocumented, []);
  });

  test('names the conditions and the data fields the code sends', () => {
    for (const c of CONDITIONS) assert.ok(pascal.has(c), c);
    const target: WorkTarget = {
      store: 'gcp',
      provider: '*',
      settings: { projectId: 'p-123456' },
      secretName: 's',
      namespace: 'ns',
      kubernetesSecretName: 'k',
    };
    const reports = [
      buildStatusReport(
        {
          kind: 'applied',
          target,
          result: {
            outcome: 'created',
            secretPath: 'p',
            version: '1',
            versionPath: 'v',
            secretName: 's',
            dryRun: false,
          },
        },
        1,
      ),
      buildStatusReport({ kind: 'job-running', target, jobName: 'j', jobNamespace: 'n' }, 1),
      buildStatusReport({ kind: 'skipped', precondition: 'p', message: 'm' }, 1),
      buildStatusReport({ kind: 'failed', target, error: new PullSecretError('INTERNAL', 'x') }, 1),
      buildStatusReport({ kind: 'finalized', target, kubernetesRemoved: true, cloud: 'retained' }, 1),
    ];
    const fields = new Set(reports.flatMap((r) => Object.keys(r.data ?? {})));
    const spans = new Set(codeSpans(text));
    assert.deepEqual(
      [...fields].filter((f) => !spans.has(f)),
      [],
    );
  });
});
