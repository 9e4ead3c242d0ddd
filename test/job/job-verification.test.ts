import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { loadJobConfig } from '../../src/job/config.js';
import { runPullSecretJob } from '../../src/job/pull-secret-job.js';
import type { JobResultFile } from '../../src/job/result-file.js';
import { CoreV1Api } from '@kubernetes/client-node';
import { loadKubeConfig, makeApiClient } from '../../src/kube/client.js';
import { parseJobReport, readJobReport, type JobReport } from '../../src/kube/job-report.js';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../../src/observability/logger.js';
import { LocalStore } from '../../src/stores/local/index.js';
import { baseEnv, finalLine, runCli, type CliResult } from '../support/cli.js';
import { CANARY_NEEDLES, CANARY_PULL_SECRET, findCanary } from '../support/fixtures.js';
import { registryUnavailable, startTestRegistry, type TestRegistry } from '../support/registry.js';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';

// Registry verification and retention in Job mode: `pull-secret run-job pull-secret` (the process a
// Job's pod runs) against the real registry (Debian's docker-registry, htpasswd Basic auth, TLS
// from a test CA) on loopback, with the settings in its environment as the adapter projects them.

const skip = registryUnavailable();
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');
/** A loopback port nothing listens on: a registry that cannot be reached. */
const DOWN = '127.0.0.1:9';
const CLUSTER = '019466a0-8f8e-7abc-9def-0123456789ab';
const SECRET_ID = `hyperfleet-${CLUSTER}-pull-secret`;
const canary = JSON.parse(CANARY_PULL_SECRET) as { auths: Record<string, { auth: string }> };
const CANARY_AUTH = Object.values(canary.auths)[0]?.auth ?? '';

let dir: string;
let registry: TestRegistry;
let runs = 0;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ps-job-verify-'));
  // The canary credential (pullbot:s3cr3t-canary-7Q2v) is a wrong password at this registry.
  if (skip === undefined)
    registry = await startTestRegistry({ auth: 'basic', username: 'pullbot', password: 'the-real-password' });
});
after(async () => {
  await registry?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A pull secret naming the test registry with `auth`, plus `note` to make its content differ. */
function pullSecret(auth: string, note = 'a'): string {
  return JSON.stringify({ auths: { [registry.host]: { auth, email: `${note}@example.com` } } });
}

function validAuth(): string {
  return Buffer.from(`${registry.username}:${registry.password}`).toString('base64');
}

interface JobRun {
  cli: CliResult;
  result: JobResultFile;
  resultText: string;
  /** What the pod's termination message would hold (TERMINATION_MESSAGE_PATH), parsed as the adapter does. */
  report: JobReport | undefined;
}

/** One job run, its own store directory per `storeName`, the verification/retention env as the adapter sets it. */
async function runJob(storeName: string, data: string, extra: Record<string, string>): Promise<JobRun> {
  const resultsPath = join(dir, `result-${++runs}.json`);
  const terminationPath = join(dir, `termination-${runs}.log`);
  const cli = await runCli(
    ['run-job', 'pull-secret'],
    baseEnv({
      SECRET_STORE: 'local',
      LOCAL_STORE_DIR: join(dir, storeName),
      CLUSTER_ID: CLUSTER,
      PULL_SECRET_DATA: data,
      RESULTS_PATH: resultsPath,
      TERMINATION_MESSAGE_PATH: terminationPath,
      ...extra,
    }),
  );
  const resultText = await readFile(resultsPath, 'utf8');
  const report = parseJobReport(await readFile(terminationPath, 'utf8').catch(() => undefined));
  return { cli, result: JSON.parse(resultText) as JobResultFile, resultText, report };
}

function verifyEnv(mode: 'warn' | 'enforce'): Record<string, string> {
  return {
    VERIFICATION_MODE: mode,
    VERIFICATION_REGISTRIES: registry.host,
    VERIFICATION_CA_PEM: registry.caPem,
    VERIFICATION_TIMEOUT_MS: '5000',
  };
}

async function versions(storeName: string): Promise<Array<{ version: string; state: string }>> {
  const store = new LocalStore({ dir: join(dir, storeName) });
  try {
    return ((await store.describe(SECRET_ID))?.versions ?? [])
      .map((v) => ({ version: v.version, state: v.state }))
      .sort((a, b) => Number(a.version) - Number(b.version));
  } finally {
    await store.close();
  }
}

/** No canary form, and no `Basic` value of it, in what the job printed or wrote. */
function assertNoCanary(run: JobRun): void {
  for (const [what, text] of [
    ['stdout', run.cli.stdout],
    ['stderr', run.cli.stderr],
    ['result file', run.resultText],
  ] as const) {
    assert.equal(findCanary(text), undefined, `canary in ${what}`);
    for (const needle of [...CANARY_NEEDLES, CANARY_AUTH])
      assert.ok(!text.includes(needle), `a credential form in ${what}`);
  }
}

describe('run-job with VERIFICATION_MODE=enforce', { skip }, () => {
  test('valid credentials are written; the result carries the verification and the current version', async () => {
    const run = await runJob('enforce', pullSecret(validAuth()), verifyEnv('enforce'));
    assert.equal(run.cli.code, 0, run.cli.stderr);
    assert.equal(run.result.status, 'success');
    assert.equal(run.result.reason, 'SecretCreated');
    assert.deepEqual(run.result.registry_verification, {
      mode: 'enforce',
      results: { [registry.host]: 'accepted' },
    });
    assert.equal(run.result.current_version, '1');
    assert.deepEqual(await versions('enforce'), [{ version: '1', state: 'ENABLED' }]);
  });

  test('refused credentials: 0 store writes, CredentialsRejected naming the registry, no credential byte anywhere', async () => {
    const before = registry.requests();
    const run = await runJob('enforce', pullSecret(CANARY_AUTH, 'b'), verifyEnv('enforce'));
    assert.equal(run.cli.code, 1, 'a refusal is a runtime failure (exit 1), not a configuration error');
    assert.equal(run.result.status, 'failure');
    assert.equal(run.result.reason, 'CredentialsRejected');
    assert.equal(run.result.error_code, 'CREDENTIALS_REJECTED');
    assert.ok(run.result.message.includes(registry.host), run.result.message);
    assert.match(run.result.message, /401/);
    assert.equal(finalLine(run.cli)?.error_code, 'CREDENTIALS_REJECTED');
    // What was refused, and the version still served, in the result file and the termination message alike.
    const refused = { mode: 'enforce', results: { [registry.host]: 'rejected' } };
    assert.deepEqual(run.result.registry_verification, refused);
    assert.equal(run.result.current_version, '1', 'version 1 is still served');
    assert.deepEqual(run.report?.registryVerification, refused);
    assert.equal(run.report?.currentVersion, '1');
    assert.equal(run.report?.errorCode, 'CREDENTIALS_REJECTED');
    // The registry was asked (401 challenge, then 401 to the credentials) and nothing was written.
    assert.equal(registry.requests() - before, 2);
    assert.deepEqual(await versions('enforce'), [{ version: '1', state: 'ENABLED' }]);
    assertNoCanary(run);
  });

  test('an unreachable registry is RegistryUnreachable (retryable), not a refusal; nothing is written', async () => {
    const data = JSON.stringify({ auths: { [DOWN]: { auth: validAuth() } } });
    const run = await runJob('unreachable', data, { ...verifyEnv('enforce'), VERIFICATION_REGISTRIES: DOWN });
    assert.equal(run.cli.code, 1);
    assert.equal(run.result.reason, 'RegistryUnreachable');
    assert.equal(run.result.error_code, 'REGISTRY_UNREACHABLE');
    assert.match(run.result.message, /will retry/);
    assert.deepEqual(await versions('unreachable'), []);
    const unchecked = { mode: 'enforce', results: { [DOWN]: 'unreachable' } };
    assert.deepEqual(run.result.registry_verification, unchecked);
    assert.deepEqual(run.report?.registryVerification, unchecked);
    assert.equal(run.result.current_version, undefined, 'no version was ever stored');
  });

  test('a failure after the check (Secret writes fail) still carries what the check found', async () => {
    // The Kubernetes API answers the rollback pin's read (before the check) and fails every Secret
    // call (after it), so the failure comes after the registry was asked.
    const kube = await startKubernetesTestServer();
    try {
      kube.injectFault({ resource: 'secrets', status: 503, times: Infinity });
      const run = await runJob('after-check', pullSecret(validAuth(), 'k8s-down'), {
        ...verifyEnv('enforce'),
        KUBERNETES_TARGET: 'api',
        KUBECONFIG: kube.kubeconfigPath,
        RETRY_MAX_ATTEMPTS: '1',
      });
      assert.equal(run.cli.code, 1, run.cli.stderr);
      assert.equal(run.result.status, 'failure');
      assert.match(run.result.error_code ?? '', /^KUBE_/);
      const accepted = { mode: 'enforce', results: { [registry.host]: 'accepted' } };
      assert.deepEqual(run.result.registry_verification, accepted);
      assert.deepEqual(run.report?.registryVerification, accepted);
    } finally {
      await kube.close();
    }
  });

  test('an unchanged pull secret makes no registry call (the check runs only before a write)', async () => {
    const before = registry.requests();
    const run = await runJob('enforce', pullSecret(validAuth()), verifyEnv('enforce'));
    assert.equal(run.cli.code, 0, run.cli.stderr);
    assert.equal(run.result.outcome, 'unchanged');
    assert.equal(run.result.registry_verification, undefined);
    assert.equal(registry.requests() - before, 0);
  });
});

describe('run-job with VERIFICATION_MODE=warn', { skip }, () => {
  test('refused credentials are written and reported in the result and the log', async () => {
    const run = await runJob('warn', pullSecret(CANARY_AUTH), verifyEnv('warn'));
    assert.equal(run.cli.code, 0, run.cli.stderr);
    assert.equal(run.result.status, 'success');
    assert.equal(run.result.reason, 'SecretCreated');
    assert.deepEqual(run.result.registry_verification, {
      mode: 'warn',
      results: { [registry.host]: 'rejected' },
    });
    assert.ok(
      run.result.message.includes(`registry verification (warn): ${registry.host} rejected`),
      run.result.message,
    );
    assert.ok(run.cli.logs.some((l) => l.operation === 'verify-registries' && l.level === 'warn'));
    assert.deepEqual(await versions('warn'), [{ version: '1', state: 'ENABLED' }]);
    assertNoCanary(run);
  });

  test('the CA may also be a file in the pod (VERIFICATION_CA_FILE)', async () => {
    const { VERIFICATION_CA_PEM: _pem, ...env } = verifyEnv('warn');
    const run = await runJob('ca-file', pullSecret(validAuth()), {
      ...env,
      VERIFICATION_CA_FILE: registry.caFile,
    });
    assert.equal(run.cli.code, 0, run.cli.stderr);
    assert.deepEqual(run.result.registry_verification, {
      mode: 'warn',
      results: { [registry.host]: 'accepted' },
    });
  });

  test('without the CA the registry is unreachable (TLS), never rejected', async () => {
    const { VERIFICATION_CA_PEM: _pem, ...env } = verifyEnv('warn');
    const run = await runJob('no-ca', pullSecret(validAuth()), env);
    assert.equal(run.cli.code, 0, run.cli.stderr);
    assert.deepEqual(run.result.registry_verification, {
      mode: 'warn',
      results: { [registry.host]: 'unreachable' },
    });
  });
});

describe('job configuration of verification and retention', () => {
  const base = { CLUSTER_ID: CLUSTER, PULL_SECRET_DATA: '{"auths":{}}', SECRET_STORE: 'local' };

  test('off by default; the variables parse as the adapter sections do', () => {
    const off = loadJobConfig(base);
    assert.equal(off.verification.mode, 'off');
    assert.equal(off.retention.enabled, false);
    const on = loadJobConfig({
      ...base,
      VERIFICATION_MODE: 'enforce',
      VERIFICATION_REGISTRIES: 'quay.io, registry.example.com:5000',
      RETENTION_ENABLED: 'true',
      RETENTION_GRACE_HOURS: '0.5',
      RETENTION_DAYS: '7',
      RETENTION_KEEP_VERSIONS: '3',
    });
    assert.deepEqual(on.verification.registries, ['quay.io', 'registry.example.com:5000']);
    assert.deepEqual(on.retention, { enabled: true, graceHours: 0.5, retentionDays: 7, keepVersions: 3 });
  });

  test('every problem is named by its variable, at once', () => {
    assert.throws(
      () => loadJobConfig({ ...base, VERIFICATION_MODE: 'enforce' }),
      /missing required environment variable: VERIFICATION_REGISTRIES/,
    );
    assert.throws(
      () => loadJobConfig({ ...base, VERIFICATION_MODE: 'strict', RETENTION_ENABLED: 'yes' }),
      (err: Error) =>
        /invalid environment variable VERIFICATION_MODE: must be off, warn or enforce/.test(err.message) &&
        /invalid environment variable RETENTION_ENABLED: must be true or false/.test(err.message),
    );
    assert.throws(
      () =>
        loadJobConfig({
          ...base,
          RETENTION_ENABLED: 'true',
          RETENTION_DAYS: '1',
          RETENTION_GRACE_HOURS: '48',
        }),
      /invalid environment variable RETENTION_DAYS: retentionDays must be at least graceHours/,
    );
    assert.throws(
      () => loadJobConfig({ ...base, VERIFICATION_MODE: 'warn', VERIFICATION_REGISTRIES: 'not a host' }),
      /invalid environment variable VERIFICATION_REGISTRIES/,
    );
    assert.throws(
      () =>
        loadJobConfig({
          ...base,
          VERIFICATION_MODE: 'warn',
          VERIFICATION_REGISTRIES: '*',
          VERIFICATION_CA_PEM: 'x',
          VERIFICATION_CA_FILE: '/ca.pem',
        }),
      /not both/,
    );
  });
});

describe('run-job with RETENTION_ENABLED=true', { skip }, () => {
  test('a Job disables the superseded version once its grace is over (RETENTION_GRACE_HOURS=0), and reports it', async () => {
    const env = { ...verifyEnv('enforce'), RETENTION_ENABLED: 'true', RETENTION_GRACE_HOURS: '0' };
    const first = await runJob('retention-cli', pullSecret(validAuth(), 'one'), env);
    assert.equal(first.cli.code, 0, first.cli.stderr);
    assert.equal(first.result.current_version, '1');
    assert.equal(first.result.previous_version, undefined);
    const second = await runJob('retention-cli', pullSecret(validAuth(), 'two'), env);
    assert.equal(second.cli.code, 0, second.cli.stderr);
    assert.equal(second.result.current_version, '2');
    assert.equal(second.result.previous_version, '1');
    assert.equal(second.result.previous_version_state, 'DISABLED');
    assert.ok(second.cli.logs.some((l) => l.operation === 'retention-disable' && l.version === '1'));
    assert.deepEqual(await versions('retention-cli'), [
      { version: '1', state: 'DISABLED' },
      { version: '2', state: 'ENABLED' },
    ]);
    // Refused credentials under enforce: no write, so no retention pass either.
    const refused = await runJob('retention-cli', pullSecret(CANARY_AUTH, 'three'), env);
    assert.equal(refused.result.reason, 'CredentialsRejected');
    assert.equal(refused.result.current_version, '2', 'the version still served');
    assert.equal(refused.result.previous_version, undefined, 'no retention pass');
    assert.equal((await versions('retention-cli')).length, 2);
  });
});

describe('the job entry with a controllable clock', () => {
  test('grace → disable → destroy: each run lists the versions (a Job has no memory) and acts on what is due', async () => {
    const storeDir = join(dir, 'retention-clock');
    const store = new LocalStore({ dir: storeDir });
    const lines: string[] = [];
    const logger = createLogger({
      level: 'info',
      destination: new Writable({
        write: (chunk: Buffer, _enc, done) => void (lines.push(chunk.toString()), done()),
      }),
    });
    const resultsPath = join(dir, 'clock-result.json');
    const HOUR = 3_600_000;
    let now = Date.now();
    const run = async (note: string): Promise<JobResultFile> => {
      const data = JSON.stringify({
        auths: {
          'registry.example.com': {
            auth: Buffer.from(`u:${note}-pw`).toString('base64'),
            email: 'a@example.com',
          },
        },
      });
      const config = loadJobConfig({
        CLUSTER_ID: CLUSTER,
        PULL_SECRET_DATA: data,
        SECRET_STORE: 'local',
        RESULTS_PATH: resultsPath,
        RETENTION_ENABLED: 'true',
        RETENTION_GRACE_HOURS: '24',
        RETENTION_DAYS: '2',
        RETENTION_KEEP_VERSIONS: '5',
      });
      await runPullSecretJob(config, logger, { store, clock: () => now });
      return JSON.parse(await readFile(resultsPath, 'utf8')) as JobResultFile;
    };
    try {
      await run('one');
      const second = await run('two');
      assert.equal(second.current_version, '2');
      assert.equal(second.previous_version, '1');
      assert.equal(
        second.previous_version_state,
        'ENABLED',
        'within its grace the old credential still serves',
      );
      const graceEnd = Date.parse(second.previous_grace_ends_at ?? '');
      assert.ok(
        graceEnd > now + 23 * HOUR && graceEnd <= now + 24 * HOUR + 60_000,
        second.previous_grace_ends_at,
      );
      // Same content, a day later: no write, but the fresh process still lists and disables.
      now += 25 * HOUR;
      const later = await run('two');
      assert.equal(later.outcome, 'unchanged');
      assert.equal(later.previous_version_state, 'DISABLED');
      assert.equal(later.previous_grace_ends_at, second.previous_grace_ends_at);
      assert.deepEqual(await versions('retention-clock'), [
        { version: '1', state: 'DISABLED' },
        { version: '2', state: 'ENABLED' },
      ]);
      // Past the retention period: destroyed.
      now += 2 * 24 * HOUR;
      await run('two');
      assert.deepEqual(await versions('retention-clock'), [
        { version: '1', state: 'DESTROYED' },
        { version: '2', state: 'ENABLED' },
      ]);
      assert.ok(lines.some((l) => l.includes('"operation":"retention-destroy"')));
    } finally {
      await store.close();
    }
  });
});

describe('Job-mode adapter: the status carries what the Job found', { skip }, () => {
  let kube: KubernetesTestServer;
  let stack: AdapterStack;
  /**
   * The store the Jobs share, standing in for a volume a real cluster mounts: a persistent path of the
   * test server's pods, since they mount an emptyDir on /tmp (src/kube/job-manifest.ts), which would
   * otherwise make a store under /tmp each pod's own.
   */
  let storeDir: string;
  before(async () => {
    storeDir = await mkdtemp(join(tmpdir(), 'ps-job-store-'));
    kube = await startKubernetesTestServer({
      namespaces: ['hyperfleet-system'],
      runJobs: { command: [process.execPath, '--import', TSX, MAIN], persistentPaths: [storeDir] },
    });
    stack = await startAdapterStack({
      store: { type: 'local', settings: { dir: storeDir } },
      kubernetes: { target: 'api', kubeconfig: kube.kubeconfigPath },
      execution: {
        mode: 'job',
        job: {
          namespace: 'hyperfleet-system',
          image: 'pull-secret:test',
          timeoutSeconds: 60,
          waitSeconds: 30,
        },
      },
      verification: {
        mode: 'enforce',
        registries: [registry.host, DOWN],
        caFile: registry.caFile,
        timeoutMs: 5000,
      },
      retention: { enabled: true },
    });
  });
  after(async () => {
    await stack?.stop();
    await kube?.close();
    if (storeDir !== undefined) await rm(storeDir, { recursive: true, force: true });
  });

  test('accepted: JobSucceeded with currentVersion and registryVerification; refused: CredentialsRejected naming the registry, nothing written, no credential byte', async () => {
    const accepted = await stack.seedCluster({ pullSecret: { data: pullSecret(validAuth()) } });
    const refused = await stack.seedCluster({ pullSecret: { data: pullSecret(CANARY_AUTH) } });
    for (const c of [accepted, refused]) kube.createNamespace(`clusters-${c.id}`);
    await Promise.all([stack.publish(accepted), stack.publish(refused)]);
    const ok = await stack.waitForStatus(
      accepted.id,
      (s) => conditionOf(s, 'Applied') === 'True/JobSucceeded',
      60_000,
    );
    assert.equal(conditionOf(ok, 'Available'), 'True/SecretAvailable');
    assert.equal(ok.data?.currentVersion, '1');
    assert.deepEqual(ok.data?.registryVerification, {
      mode: 'enforce',
      results: { [registry.host]: 'accepted' },
    });

    const no = await stack.waitForStatus(
      refused.id,
      (s) => conditionOf(s, 'Available') === 'False/CredentialsRejected',
      60_000,
    );
    assert.equal(conditionOf(no, 'Applied'), 'False/CredentialsRejected');
    assert.equal(conditionOf(no, 'Health'), 'True/Healthy', 'the cluster input is at fault, not the adapter');
    const available = no.conditions.find((c) => c.type === 'Available');
    assert.ok((available?.message ?? '').includes(registry.host), available?.message);
    assert.equal(no.data?.errorCode, 'CREDENTIALS_REJECTED');
    assert.deepEqual(no.data?.registryVerification, {
      mode: 'enforce',
      results: { [registry.host]: 'rejected' },
    });
    const store = new LocalStore({ dir: storeDir });
    try {
      assert.equal(await store.describe(`hyperfleet-${refused.id}-pull-secret`), undefined, '0 store writes');
    } finally {
      await store.close();
    }

    // Unreachable: the Job retried its pod (backoff limit), then the status says RegistryUnreachable, as in-process.
    const down = await stack.seedCluster({
      pullSecret: { data: JSON.stringify({ auths: { [DOWN]: { auth: validAuth() } } }) },
    });
    kube.createNamespace(`clusters-${down.id}`);
    await stack.publish(down);
    const unreachable = await stack.waitForStatus(
      down.id,
      (s) => conditionOf(s, 'Available') === 'False/RegistryUnreachable',
      60_000,
    );
    assert.equal(unreachable.data?.errorCode, 'REGISTRY_UNREACHABLE');
    assert.deepEqual(unreachable.data?.registryVerification, {
      mode: 'enforce',
      results: { [DOWN]: 'unreachable' },
    });
    assert.ok(
      kube.jobRuns().filter((r) => r.job === `pullsecret-${down.id}-gen1`).length > 1,
      'the Job retried its pod',
    );

    const runs = kube.jobRuns();
    assert.ok(runs.length >= 2);
    const texts = [
      JSON.stringify([ok, no]),
      stack.logs.join('\n'),
      ...runs.map((r) => `${r.stdout}\n${r.stderr}`),
      JSON.stringify(kube.listObjects('pods', 'hyperfleet-system')),
    ];
    for (const text of texts) {
      assert.equal(findCanary(text), undefined);
      assert.ok(!text.includes(CANARY_AUTH));
    }
  });

  test('a refused rotation: the status names the version the Job left served', async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: pullSecret(validAuth(), 'rotate') } });
    kube.createNamespace(`clusters-${cluster.id}`);
    await stack.publish(cluster);
    const first = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Applied') === 'True/JobSucceeded',
      60_000,
    );
    assert.equal(first.data?.currentVersion, '1');
    const patched = await stack.request('PATCH', `/clusters/${cluster.id}`, {
      spec: { ...cluster.spec, pullSecret: { data: pullSecret(CANARY_AUTH, 'rotate') } },
    });
    assert.equal(patched.status, 200);
    await stack.publish((await patched.json()) as { id: string; generation: number });
    const refused = await stack.waitForStatus(
      cluster.id,
      (s) => s.observed_generation === 2 && conditionOf(s, 'Available') === 'False/CredentialsRejected',
      60_000,
    );
    assert.equal(refused.data?.currentVersion, '1', 'version 1 is still served');
    assert.deepEqual(refused.data?.registryVerification, {
      mode: 'enforce',
      results: { [registry.host]: 'rejected' },
    });
    const available = refused.conditions.find((c) => c.type === 'Available');
    assert.match(available?.message ?? '', /; version 1 is still served$/);
    assert.equal(findCanary(JSON.stringify(refused)), undefined);
  });

  // A real API server can fail the pod list that reads the Job's report (a reset keep-alive
  // connection, a 5xx, 429 from API Priority and Fairness:
  // https://kubernetes.io/docs/concepts/cluster-administration/flow-control/): the report is read
  // again, so a Job's success is never reported without what its pod found.
  test('a pod list that fails once does not lose the report: the status still carries currentVersion', async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: pullSecret(validAuth(), 'listed') } });
    kube.createNamespace(`clusters-${cluster.id}`);
    let taken = 0;
    const remove = kube.injectFault({
      method: 'GET',
      resource: 'pods',
      namespace: 'hyperfleet-system',
      reset: true,
      onTaken: () => void taken++,
    });
    try {
      await stack.publish(cluster);
      const ok = await stack.waitForStatus(
        cluster.id,
        (s) => conditionOf(s, 'Applied') === 'True/JobSucceeded',
        60_000,
      );
      assert.equal(taken, 1, 'the pod list failed once');
      assert.equal(ok.data?.currentVersion, '1');
      assert.deepEqual(ok.data?.registryVerification, {
        mode: 'enforce',
        results: { [registry.host]: 'accepted' },
      });
    } finally {
      remove();
    }
  });

  test('readJobReport gives up only when its signal aborts, and then throws instead of answering "no report"', async () => {
    const core = makeApiClient(loadKubeConfig({ kubeconfigPath: kube.kubeconfigPath }).kubeConfig, CoreV1Api);
    const aborted = AbortSignal.abort();
    await assert.rejects(readJobReport(core, 'hyperfleet-system', 'some-uid', aborted), { code: 'ABORTED' });
    assert.equal(
      await readJobReport(core, 'hyperfleet-system', 'no-such-uid'),
      undefined,
      'no pod: no report',
    );
  });
});
