import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import type { AdapterStatus } from '../../src/hyperfleet/index.js';
import {
  RegistryVerifier,
  VerificationGate,
  verificationStep,
  type VerifierSettings,
} from '../../src/verification/index.js';
import { toPullSecretError } from '../../src/errors/index.js';
import { factsOf } from '../../src/reconcile/failure-facts.js';
import { conditionOf, startAdapterStack, type AdapterStack } from '../support/adapter-stack.js';
import { baseEnv, runCli } from '../support/cli.js';
import { CANARY_NEEDLES, CANARY_PULL_SECRET, findCanary } from '../support/fixtures.js';
import {
  registryUnavailable,
  skopeoInspect,
  startTestRegistry,
  type TestRegistry,
} from '../support/registry.js';
import { Writable } from 'node:stream';
import { ManifestDirectoryTarget } from '../../src/kube/manifest-directory.js';
import { createLogger } from '../../src/observability/logger.js';
import { reconcilePullSecret } from '../../src/reconcile/reconcile-pull-secret.js';
import { DEFAULT_RETENTION_POLICY } from '../../src/retention/plan.js';
import { RetentionRunner } from '../../src/retention/runner.js';
import { retentionStep } from '../../src/retention/step.js';
import { LocalStore } from '../../src/stores/local/index.js';

// Registry verification against the real thing: Debian's docker-registry (CNCF Distribution) on
// loopback with TLS from a test CA, htpasswd Basic auth or token auth with a loopback token issuer;
// skopeo pulls with the `.dockerconfigjson` the adapter wrote.

const skip = registryUnavailable();
const canary = JSON.parse(CANARY_PULL_SECRET) as { auths: Record<string, { auth: string }> };
const CANARY_USER = 'pullbot';
const CANARY_PASSWORD = 's3cr3t-canary-7Q2v';

function settings(registry: TestRegistry, extra: Partial<VerifierSettings> = {}): VerifierSettings {
  return {
    registries: [registry.host],
    caFile: registry.caFile,
    timeoutMs: 5000,
    perRegistryPerMinute: 6000,
    cacheSeconds: 0,
    ...extra,
  };
}

describe('registry login check (Basic)', { skip }, () => {
  let registry: TestRegistry;
  before(async () => (registry = await startTestRegistry({ auth: 'basic' })));
  after(async () => registry?.stop());

  test('valid credentials are accepted: 401 challenge, then 200 with Basic', async () => {
    const verifier = new RegistryVerifier(settings(registry));
    try {
      const before = registry.requests();
      const report = await verifier.verify(registry.pullSecret());
      assert.deepEqual(
        report.results.map((r) => [r.registry, r.outcome]),
        [[registry.host, 'accepted']],
      );
      assert.equal(report.roundTrips, 2);
      assert.equal(registry.requests() - before, 2);
    } finally {
      verifier.close();
    }
  });

  test('a wrong password is rejected, naming the status', async () => {
    const verifier = new RegistryVerifier(settings(registry));
    try {
      const [result] = (await verifier.verify(registry.pullSecret(registry.username, 'not-the-password')))
        .results;
      assert.equal(result?.outcome, 'rejected');
      assert.match(result?.detail ?? '', /401/);
    } finally {
      verifier.close();
    }
  });

  test('username/password entries are checked like auth', async () => {
    const verifier = new RegistryVerifier(settings(registry));
    try {
      const doc = JSON.stringify({
        auths: { [registry.host]: { username: registry.username, password: registry.password } },
      });
      assert.equal((await verifier.verify(doc)).results[0]?.outcome, 'accepted');
    } finally {
      verifier.close();
    }
  });

  test('a verdict is cached by a hash of host and credential: the second check makes no registry call', async () => {
    const verifier = new RegistryVerifier(settings(registry, { cacheSeconds: 60 }));
    try {
      await verifier.verify(registry.pullSecret());
      const before = registry.requests();
      const again = await verifier.verify(registry.pullSecret());
      assert.equal(again.results[0]?.cached, true);
      assert.equal(again.results[0]?.outcome, 'accepted');
      assert.equal(registry.requests() - before, 0);
      // Another password is another key: asked again.
      const other = await verifier.verify(registry.pullSecret(registry.username, 'other-password'));
      assert.equal(other.results[0]?.outcome, 'rejected');
      assert.equal(registry.requests() - before, 2);
    } finally {
      verifier.close();
    }
  });

  test('registries outside the allow-list and token entries are skipped without a call', async () => {
    const verifier = new RegistryVerifier(settings(registry, { registries: ['quay.io'] }));
    try {
      const before = registry.requests();
      const doc = JSON.stringify({
        auths: {
          [registry.host]: { auth: Buffer.from('a:b').toString('base64') },
          'quay.io': { identitytoken: 'refresh-token-value' },
        },
      });
      const report = await verifier.verify(doc);
      assert.deepEqual(
        report.results.map((r) => r.outcome),
        ['skipped', 'skipped'],
      );
      assert.equal(registry.requests() - before, 0);
    } finally {
      verifier.close();
    }
  });

  test('without the registry CA the TLS check fails: unreachable, not rejected', async () => {
    const { caFile: _ca, ...rest } = settings(registry);
    const verifier = new RegistryVerifier(rest);
    try {
      const [result] = (await verifier.verify(registry.pullSecret())).results;
      assert.equal(result?.outcome, 'unreachable');
      assert.match(result?.detail ?? '', /TLS/);
    } finally {
      verifier.close();
    }
  });

  test('a registry that is down is unreachable, not rejected', async () => {
    const verifier = new RegistryVerifier(settings(registry));
    await registry.pause();
    try {
      const [result] = (await verifier.verify(registry.pullSecret())).results;
      assert.equal(result?.outcome, 'unreachable');
      assert.match(result?.detail ?? '', /ECONNREFUSED/);
    } finally {
      verifier.close();
      await registry.resume();
    }
  });
});

describe('registry login check (Bearer token)', { skip }, () => {
  let registry: TestRegistry;
  before(async () => (registry = await startTestRegistry({ auth: 'token' })));
  after(async () => registry?.stop());

  test('valid credentials get a token from the realm, and the registry accepts it', async () => {
    const verifier = new RegistryVerifier(settings(registry));
    try {
      const report = await verifier.verify(registry.pullSecret());
      assert.equal(report.results[0]?.outcome, 'accepted', report.results[0]?.detail);
      assert.equal(report.roundTrips, 3);
      assert.equal(registry.tokenRequests(), 1);
      assert.equal(registry.requests(), 2);
    } finally {
      verifier.close();
    }
  });

  test('the token service refuses a wrong password: rejected', async () => {
    const verifier = new RegistryVerifier(settings(registry));
    try {
      const [result] = (await verifier.verify(registry.pullSecret(registry.username, 'wrong'))).results;
      assert.equal(result?.outcome, 'rejected');
      assert.match(result?.detail ?? '', /token service .* 401/);
    } finally {
      verifier.close();
    }
  });
});

/** Store writes (createSecret, addVersion) the adapter made so far. */
async function storeWrites(stack: AdapterStack): Promise<number> {
  const { values } = await stack.adapter.metrics.storeApiCalls.get();
  return values
    .filter((v) => v.labels.method === 'createSecret' || v.labels.method === 'addVersion')
    .reduce((n, v) => n + v.value, 0);
}

/** `pullsecret_registry_verifications_total` by outcome, all registries. */
async function verifications(stack: AdapterStack, outcome: string): Promise<number> {
  const { values } = await stack.adapter.metrics.registryVerifications.get();
  return values.filter((v) => v.labels.outcome === outcome).reduce((n, v) => n + v.value, 0);
}

function condition(
  status: AdapterStatus,
  type: string,
): { status: string; reason?: string; message?: string } | undefined {
  return status.conditions.find((c) => c.type === type);
}

/** The `.dockerconfigjson` of the Kubernetes Secret the adapter wrote (manifests target). */
async function writtenDockerConfig(stack: AdapterStack, status: AdapterStatus): Promise<string> {
  const { namespace, name } = (status.data as { kubernetesSecret: { namespace: string; name: string } })
    .kubernetesSecret;
  const manifest = parse(await readFile(join(stack.dir, 'manifests', namespace, `${name}.yaml`), 'utf8')) as {
    data: Record<string, string>;
  };
  return Buffer.from(manifest.data['.dockerconfigjson'] ?? '', 'base64').toString('utf8');
}

describe('registry verification in the adapter (enforce)', { skip }, () => {
  let registry: TestRegistry;
  let stack: AdapterStack;
  let dir: string;
  before(async () => {
    registry = await startTestRegistry({ auth: 'basic' });
    dir = await mkdtemp(join(tmpdir(), 'ps-verify-'));
    stack = await startAdapterStack({
      verification: {
        mode: 'enforce',
        registries: [registry.host],
        caFile: registry.caFile,
        timeoutMs: 3000,
        perRegistryPerMinute: 6000,
        cacheSeconds: 0,
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await registry?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('refused credentials are not written: 0 store writes, Available=False CredentialsRejected naming the registry', async () => {
    const cluster = await stack.seedCluster({
      pullSecret: { data: registry.pullSecret(registry.username, 'revoked-password') },
    });
    const writes = await storeWrites(stack);
    await stack.publish(cluster);
    const status = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Available') === 'False/CredentialsRejected',
    );
    assert.equal(await storeWrites(stack), writes);
    assert.equal(conditionOf(status, 'Applied'), 'False/CredentialsRejected');
    assert.equal(conditionOf(status, 'Health'), 'True/Healthy');
    assert.ok(condition(status, 'Available')?.message?.includes(registry.host));
    assert.equal((status.data as { errorCode?: string }).errorCode, 'CREDENTIALS_REJECTED');
    // What the check found is reported with the refusal, as with a write (docs/verification.md).
    assert.deepEqual((status.data as { registryVerification?: unknown }).registryVerification, {
      mode: 'enforce',
      results: { [registry.host]: 'rejected' },
    });
    assert.equal(status.data?.currentVersion, undefined, 'nothing was ever stored for this cluster');
  });

  test('a refused rotation names the version still served: currentVersion stays, the new pull secret is refused', async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: registry.pullSecret() } });
    await stack.publish(cluster);
    const served = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Available') === 'True/SecretAvailable',
    );
    assert.equal(served.data?.currentVersion, '1');
    const writes = await storeWrites(stack);
    const patched = await stack.request('PATCH', `/clusters/${cluster.id}`, {
      spec: {
        ...(cluster as { spec: Record<string, unknown> }).spec,
        pullSecret: { data: registry.pullSecret(registry.username, 'rotated-but-wrong') },
      },
    });
    assert.equal(patched.status, 200);
    const rotated = (await patched.json()) as { id: string; generation: number };
    assert.equal(rotated.generation, 2);
    await stack.publish(rotated);
    const status = await stack.waitForStatus(
      cluster.id,
      (s) => s.observed_generation === 2 && conditionOf(s, 'Available') === 'False/CredentialsRejected',
    );
    assert.equal(await storeWrites(stack), writes, 'the refused pull secret was not written');
    assert.equal(status.data?.currentVersion, '1', 'the version the Secret still holds');
    assert.deepEqual(status.data?.registryVerification, {
      mode: 'enforce',
      results: { [registry.host]: 'rejected' },
    });
    const message = condition(status, 'Available')?.message ?? '';
    assert.match(message, /version 1 .*still served/, message);
    // The Kubernetes Secret still holds version 1's content, which still pulls.
    assert.equal(await writtenDockerConfig(stack, status), registry.pullSecret());
  });

  test('accepted credentials are written; skopeo pulls with the written .dockerconfigjson; a no-op makes 0 registry calls', async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: registry.pullSecret() } });
    await stack.publish(cluster);
    const status = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Available') === 'True/SecretAvailable',
    );
    assert.deepEqual((status.data as { registryVerification?: unknown }).registryVerification, {
      mode: 'enforce',
      results: { [registry.host]: 'accepted' },
    });

    const authFile = join(dir, 'auth.json');
    await writeFile(authFile, await writtenDockerConfig(stack, status));
    const pulled = await skopeoInspect(registry.image, authFile, registry.certDir, dir);
    assert.equal(pulled.code, 0, pulled.stderr);
    assert.match(pulled.stdout, /"Digest": "sha256:/);

    // The same pull secret again: nothing new to promote, so no registry call at all.
    const requests = registry.requests();
    const checks = await verifications(stack, 'accepted');
    await stack.request('PATCH', `/api/hyperfleet/v1/clusters/${cluster.id}`, { labels: { touched: 'yes' } });
    await stack.publish(cluster);
    await stack.waitForStatus(cluster.id, (s) => conditionOf(s, 'Applied') === 'True/SecretUpToDate');
    assert.equal(registry.requests(), requests);
    assert.equal(await verifications(stack, 'accepted'), checks);

    // `pull-secret verify --cluster-id` checks the stored secret with the config's store and verification sections.
    const config = join(dir, 'config.yaml');
    await writeFile(
      config,
      JSON.stringify({
        store: { type: 'local', settings: { dir: join(stack.dir, 'store') } },
        verification: { registries: [registry.host], caFile: registry.caFile },
      }),
    );
    const stored = await runCli(['verify', '--cluster-id', cluster.id, '--config', config], baseEnv());
    assert.equal(stored.code, 0, stored.stderr);
    assert.equal(stored.stdout.trim().split('\t').slice(0, 2).join(' '), `${registry.host} accepted`);
  });

  test('an unreachable registry is RegistryUnreachable and retried, not refused; it recovers when the registry is back', async () => {
    const cluster = await stack.seedCluster({ pullSecret: { data: registry.pullSecret() } });
    await registry.pause();
    const writes = await storeWrites(stack);
    let resumed = false;
    try {
      await stack.publish(cluster);
      const status = await stack.waitForStatus(
        cluster.id,
        (s) => conditionOf(s, 'Available') === 'False/RegistryUnreachable',
      );
      assert.equal(await storeWrites(stack), writes);
      assert.equal(conditionOf(status, 'Applied'), 'False/RegistryUnreachable');
      assert.deepEqual((status.data as { registryVerification?: unknown }).registryVerification, {
        mode: 'enforce',
        results: { [registry.host]: 'unreachable' },
      });
      // Retried by the broker: more than one check while the registry is down.
      const deadline = Date.now() + 10_000;
      while ((await verifications(stack, 'unreachable')) < 2 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      assert.ok((await verifications(stack, 'unreachable')) >= 2);
      await registry.resume();
      resumed = true;
      await stack.waitForStatus(
        cluster.id,
        (s) => conditionOf(s, 'Available') === 'True/SecretAvailable',
        20_000,
      );
    } finally {
      if (!resumed) await registry.resume();
    }
  });
});

describe('a failure after the check keeps what the check found (the core, real registry)', { skip }, () => {
  let registry: TestRegistry;
  let dir: string;
  before(async () => {
    registry = await startTestRegistry({ auth: 'basic' });
    dir = await mkdtemp(join(tmpdir(), 'ps-verify-late-'));
  });
  after(async () => {
    await registry?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('the Kubernetes Secret cannot be written after an accepted check: the error carries the verification', async () => {
    const blocker = join(dir, 'not-a-directory');
    await writeFile(blocker, 'x');
    const verifier = new RegistryVerifier(settings(registry));
    const store = new LocalStore({ dir: join(dir, 'store') });
    try {
      const failure = await reconcilePullSecret(
        { clusterId: 'c-late-1', pullSecretData: registry.pullSecret() },
        {
          store,
          kubernetes: new ManifestDirectoryTarget({ directory: join(blocker, 'manifests') }),
          retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
          log: createLogger({ level: 'silent' }),
          steps: [verificationStep(new VerificationGate('warn', verifier))],
        },
      ).then(
        () => assert.fail('the manifest write should fail'),
        (err: unknown) => err,
      );
      assert.match(toPullSecretError(failure).code, /^KUBE_/);
      assert.deepEqual(factsOf(failure), {
        verification: { mode: 'warn', results: { [registry.host]: 'accepted' } },
      });
    } finally {
      verifier.close();
      await store.close();
    }
  });
});

describe('registry verification in the adapter (warn)', { skip }, () => {
  let registry: TestRegistry;
  let stack: AdapterStack;
  before(async () => {
    registry = await startTestRegistry({ auth: 'token' });
    stack = await startAdapterStack({
      verification: { mode: 'warn', registries: ['*'], caFile: registry.caFile, cacheSeconds: 0 },
    });
  });
  after(async () => {
    await stack?.stop();
    await registry?.stop();
  });

  test('refused credentials are written and reported (status data, Applied message, a warning)', async () => {
    const cluster = await stack.seedCluster({
      pullSecret: { data: registry.pullSecret(registry.username, 'stale-password') },
    });
    const writes = await storeWrites(stack);
    await stack.publish(cluster);
    const status = await stack.waitForStatus(
      cluster.id,
      (s) => conditionOf(s, 'Available') === 'True/SecretAvailable',
    );
    assert.ok((await storeWrites(stack)) > writes);
    assert.deepEqual((status.data as { registryVerification?: unknown }).registryVerification, {
      mode: 'warn',
      results: { [registry.host]: 'rejected' },
    });
    assert.match(
      condition(status, 'Applied')?.message ?? '',
      new RegExp(`registry verification \\(warn\\): ${registry.host.replace(/\./g, '\\.')} rejected`),
    );
    assert.ok(stack.logs.some((line) => line.includes(`Registry verification: refused by ${registry.host}`)));
  });
});

describe('leak canary across the verification path', { skip }, () => {
  let basic: TestRegistry;
  let token: TestRegistry;
  let stack: AdapterStack;
  let dir: string;
  before(async () => {
    // The canary is the right password at the token registry and a wrong one at the Basic registry.
    basic = await startTestRegistry({ auth: 'basic', username: CANARY_USER, password: 'the-real-password' });
    token = await startTestRegistry({ auth: 'token', username: CANARY_USER, password: CANARY_PASSWORD });
    dir = await mkdtemp(join(tmpdir(), 'ps-verify-leak-'));
    const bundle = join(dir, 'cas.pem');
    await writeFile(bundle, `${basic.caPem}\n${token.caPem}`);
    stack = await startAdapterStack({
      verification: { mode: 'enforce', registries: ['*'], caFile: bundle, cacheSeconds: 0 },
    });
  });
  after(async () => {
    await stack?.stop();
    await basic?.stop();
    await token?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('no canary credential, Authorization value or issued token in logs, metrics or statuses', async () => {
    const canaryAuth = Object.values(canary.auths)[0]?.auth ?? '';
    assert.equal(Buffer.from(canaryAuth, 'base64').toString(), `${CANARY_USER}:${CANARY_PASSWORD}`);
    const rejected = await stack.seedCluster({
      pullSecret: { data: JSON.stringify({ auths: { [basic.host]: { auth: canaryAuth } } }) },
    });
    const accepted = await stack.seedCluster({
      pullSecret: { data: JSON.stringify({ auths: { [token.host]: { auth: canaryAuth } } }) },
    });
    await Promise.all([stack.publish(rejected), stack.publish(accepted)]);
    const statuses = [
      await stack.waitForStatus(
        rejected.id,
        (s) => conditionOf(s, 'Available') === 'False/CredentialsRejected',
      ),
      await stack.waitForStatus(accepted.id, (s) => conditionOf(s, 'Available') === 'True/SecretAvailable'),
    ];
    assert.ok(token.issuedTokens().length > 0);
    const metrics = await (await fetch(`http://127.0.0.1:${stack.adapter.metricsPort}/metrics`)).text();
    assert.match(
      metrics,
      /pullsecret_registry_verifications_total\{registry="127\.0\.0\.1:\d+",outcome="rejected"\} 1/,
    );
    // The verification path did log (its results), so the check below covers it.
    assert.ok(stack.logs.some((line) => line.includes('verify-registries')));
    const needles = [...CANARY_NEEDLES, `Basic ${canaryAuth}`, ...token.issuedTokens()];
    for (const [what, text] of [
      ['logs', stack.logs.join('\n')],
      ['metrics', metrics],
      ['statuses', JSON.stringify(statuses)],
    ] as const) {
      assert.equal(findCanary(text), undefined, `canary in ${what}`);
      for (const needle of needles) assert.ok(!text.includes(needle), `a credential form in ${what}`);
    }
  });
});

describe('pull-secret verify', { skip }, () => {
  let registry: TestRegistry;
  let dir: string;
  before(async () => {
    registry = await startTestRegistry({ auth: 'basic' });
    dir = await mkdtemp(join(tmpdir(), 'ps-verify-cli-'));
  });
  after(async () => {
    await registry?.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const file = async (text: string): Promise<string> => {
    const path = join(dir, `ps-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(path, text);
    return path;
  };

  test('one line per registry; exit 0 when accepted, 1 when rejected or unreachable, skipped does not fail', async () => {
    const good = await runCli(
      ['verify', '--file', await file(registry.pullSecret()), '--ca-file', registry.caFile],
      baseEnv(),
    );
    assert.equal(good.code, 0, good.stderr);
    assert.match(good.stdout, new RegExp(`^${registry.host.replace(/\./g, '\\.')}\taccepted\t`));

    const mixed = JSON.stringify({
      auths: {
        [registry.host]: { auth: Buffer.from(`${registry.username}:${CANARY_PASSWORD}`).toString('base64') },
        'quay.io': { auth: Buffer.from('x:y-other').toString('base64') },
      },
    });
    const bad = await runCli(
      ['verify', '--file', await file(mixed), '--ca-file', registry.caFile, '--registry', registry.host],
      baseEnv(),
    );
    assert.equal(bad.code, 1);
    const lines = bad.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t').slice(0, 2).join(' '));
    assert.deepEqual(lines, [`${registry.host} rejected`, 'quay.io skipped']);
    assert.equal(findCanary(bad.stdout + bad.stderr), undefined);

    const noCa = await runCli(['verify', '--file', await file(registry.pullSecret())], baseEnv());
    assert.equal(noCa.code, 1);
    assert.match(noCa.stdout, /\tunreachable\tTLS failed/);
  });

  test('usage errors exit 2; --help explains the output and exit codes', async () => {
    assert.equal((await runCli(['verify'], baseEnv())).code, 2);
    assert.equal(
      (await runCli(['verify', '--file', await file('{"auths":'), '--ca-file', registry.caFile], baseEnv()))
        .code,
      2,
    );
    assert.equal((await runCli(['verify', '--cluster-id', 'abc'], baseEnv())).code, 2);
    const help = await runCli(['verify', '--help'], baseEnv());
    assert.equal(help.code, 0);
    assert.match(help.stdout, /accepted \| rejected \| unreachable \| skipped/);
  });
});

// The full rotation with overlap, against the real registry and skopeo. Honest about what each side
// does: retiring a store version stops the store serving the old credential; it does NOT revoke it at
// the registry. The registry's owner removes the old account; only then is the old credential refused.
describe(
  'rotation with overlap: the old credential is refused after retirement (real registry, skopeo)',
  { skip },
  () => {
    const HOUR = 3_600_000;
    const RETRY = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 };
    let registry: TestRegistry;
    let dir: string;
    before(async () => {
      registry = await startTestRegistry({
        auth: 'basic',
        username: 'puller-old',
        password: `old-${Date.now().toString(36)}-pw`,
      });
      dir = await mkdtemp(join(tmpdir(), 'ps-rotation-'));
    });
    after(async () => {
      await registry?.stop();
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    test('A then B: both pull during the grace; after it version 1 is disabled, A is removed from htpasswd, the old authfile is refused and the Secret still pulls', async () => {
      const oldAccount = [registry.username, registry.password] as const;
      const newAccount = ['puller-new', `new-${Date.now().toString(36)}-pw`] as const;
      // The overlap at the registry: both accounts are valid while the pull secret moves from A to B.
      await registry.setAccounts([oldAccount, newAccount]);

      let offset = 0;
      const store = new LocalStore({ dir: join(dir, 'store') });
      const kubernetes = new ManifestDirectoryTarget({ directory: join(dir, 'manifests') });
      const runner = new RetentionRunner({
        policy: DEFAULT_RETENTION_POLICY,
        retry: RETRY,
        clock: () => Date.now() + offset,
      });
      const lines: string[] = [];
      const log = createLogger({
        level: 'debug',
        destination: new Writable({
          write(chunk: Buffer, _e, done) {
            lines.push(chunk.toString());
            done();
          },
        }),
      });
      const clusterId = 'c-rotation-1';
      const secretId = `hyperfleet-${clusterId}-pull-secret`;
      const reconcile = (account: readonly [string, string]) =>
        reconcilePullSecret(
          { clusterId, pullSecretData: registry.pullSecret(...account) },
          { store, kubernetes, retry: RETRY, log, steps: [retentionStep(runner)] },
        );
      const pull = (authFile: string) => skopeoInspect(registry.image, authFile, registry.certDir, dir);
      const secretAuthFile = async () => {
        const manifest = parse(
          await readFile(kubernetes.pathOf(`clusters-${clusterId}`, `${clusterId}-pull-secret`), 'utf8'),
        ) as { data: Record<string, string> };
        const file = join(dir, 'secret-auth.json');
        await writeFile(file, Buffer.from(manifest.data['.dockerconfigjson'] ?? '', 'base64'));
        return file;
      };
      try {
        const first = await reconcile(oldAccount);
        assert.equal(first.outcome, 'created');
        const second = await reconcile(newAccount);
        assert.equal(second.outcome, 'updated');
        assert.equal(second.retention?.previous?.version, first.version);
        assert.equal(second.retention?.previous?.state, 'ENABLED');

        // During the grace: the old credential, read from the store's version 1, still pulls, and so does the Secret the adapter wrote (B).
        const oldAuthFile = join(dir, 'old-auth.json');
        await writeFile(oldAuthFile, (await store.accessVersion(secretId, first.version ?? '')).data);
        assert.equal((await pull(oldAuthFile)).code, 0, 'version 1 (A) pulls during the grace');
        const current = await secretAuthFile();
        assert.equal(
          await readFile(current, 'utf8'),
          registry.pullSecret(...newAccount),
          'the Secret holds B',
        );
        const withSecret = await pull(current);
        assert.equal(withSecret.code, 0, withSecret.stderr);

        // After the grace: retention disables version 1 in the store, which then refuses to serve it.
        offset = 25 * HOUR;
        const retired = await reconcile(newAccount);
        assert.equal(retired.outcome, 'unchanged');
        assert.equal(retired.retention?.previous?.state, 'DISABLED');
        await assert.rejects(
          store.accessVersion(secretId, first.version ?? ''),
          (e: { code?: string }) => e.code === 'VERSION_NOT_ENABLED',
        );
        // Retiring a store version does not revoke the credential: the registry still takes A until its owner removes it.
        assert.equal((await pull(oldAuthFile)).code, 0, 'the store cannot revoke a registry account');

        // The registry's owner removes A: the old authfile is refused, the Secret's current .dockerconfigjson still pulls.
        await registry.setAccounts([newAccount]);
        const refused = await pull(oldAuthFile);
        assert.notEqual(refused.code, 0);
        assert.match(refused.stderr, /unauthorized|authentication required|401/i);
        const still = await pull(await secretAuthFile());
        assert.equal(still.code, 0, still.stderr);

        // No credential of either account in the logs.
        const logged = lines.join('');
        for (const secret of [
          oldAccount[1],
          newAccount[1],
          Buffer.from(`${oldAccount.join(':')}`).toString('base64'),
          Buffer.from(`${newAccount.join(':')}`).toString('base64'),
        ]) {
          assert.equal(logged.includes(secret), false);
        }
      } finally {
        await store.close();
      }
    });
  },
);
