// The adapter's bundle (scripts/bundle.mjs, run by `npm run build`; the `pull-secret` executable runs
// it for `adapter`): built here from src/cli/adapter-entry.ts into a temp dir, assembled into the
// image's layout (scripts/assemble-image-layout.mjs) and run from there alone through the executable,
// which has no main.js to fall back on, as the image's user (UID 1000 when the tests run as root: the
// layout is root's, 0755/0644), on the production path: events from the real
// Pub/Sub emulator, GCP Secret Manager through the real SDK (gRPC test server), the Kubernetes API
// through the real client (HTTPS test server), statuses to the HyperFleet API stand-in; AWS Secrets
// Manager and Azure Key Vault (their SDKs, lazily loaded chunks) for clusters on those clouds. Every
// dependency a bundle could break (gRPC and google-gax for two services, the AWS and Azure SDKs and
// their credential chains, the Kubernetes client and its watch) runs here. Help and configuration errors read as main.ts's.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createBroker } from '../../src/brokers/registry.js';
import type { Broker } from '../../src/brokers/broker.js';
import { startHyperFleetApiStandIn, type HyperFleetApiStandIn } from '../../src/dev/hyperfleet-api/index.js';
import type { AdapterStatus, Cluster } from '../../src/hyperfleet/index.js';
import { baseEnv, runCli, runNode } from '../support/cli.js';
import { buildBundle, imageUser, jsFiles, readableByImageUser, type BuiltBundle } from '../support/bundle.js';
import { jsonFixture, VALID_PULL_SECRET } from '../support/fixtures.js';
import { startPubSubEmulator, type PubSubEmulator } from '../support/pubsub-emulator.js';
import { until } from '../support/until.js';
import { freePort } from '../support/process-group.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';
import {
  startAwsSecretsManagerTestServer,
  TEST_CREDENTIALS,
  type AwsSecretsManagerTestServer,
} from '../servers/aws-secrets-manager/index.js';
import { startKeyVaultTestServer, type KeyVaultTestServer } from '../servers/azure-key-vault/index.js';
import { awsTestEnv } from '../support/store-harness.js';

process.env.METADATA_SERVER_DETECTION = 'none';
/** The GCP project of the cluster fixture. */
const PROJECT = 'customer-prod-12345';

describe('the adapter bundle on the production path', { timeout: 5 * 60_000 }, () => {
  let bundle: BuiltBundle;
  let emulator: PubSubEmulator;
  let api: HyperFleetApiStandIn;
  let gcp: SecretManagerTestServer;
  let kube: KubernetesTestServer;
  let aws: AwsSecretsManagerTestServer;
  let azure: KeyVaultTestServer;
  let publisher: Broker;
  let dir = '';
  let adapter: ChildProcess;
  let output = '';
  let events = 0;
  let metricsPort = 0;

  const brokerConfig = () => ({
    type: 'pubsub' as const,
    projectId: 'emulator-project',
    apiEndpoint: emulator.host,
    topic: 'bundle-events',
    subscriptionId: 'pullsecret-bundle',
    maxInFlight: 8,
  });
  const statusOf = (id: string): AdapterStatus | undefined =>
    api.listStatuses(id).find((s) => s.adapter === 'pullsecret');
  const condition = (s: AdapterStatus | undefined, type: string) => {
    const c = s?.conditions.find((x) => x.type === type);
    return c === undefined ? undefined : `${c.status}/${c.reason ?? ''}`;
  };
  const secretOf = (id: string) =>
    kube.getObject('secrets', `clusters-${id}`, `${id}-pull-secret`) as
      { data?: Record<string, string> } | undefined;
  const payloadOf = (id: string) =>
    Buffer.from(secretOf(id)?.data?.['.dockerconfigjson'] ?? '', 'base64').toString();

  /** A cluster of the fixture of `cloud` (its spec entries overridden by `spec`) that meets the preconditions, and its namespace. */
  async function seedCluster(
    cloud: 'gcp' | 'aws' | 'azure' = 'gcp',
    spec: Record<string, unknown> = {},
  ): Promise<Cluster> {
    const fixture = jsonFixture<Cluster & { spec: Record<string, unknown> }>(
      `clusters/${cloud}-cluster.json`,
    );
    const { id: _id, href: _href, ...rest } = fixture;
    const cluster = await api.seedCluster({
      ...rest,
      generation: 1,
      spec: { ...fixture.spec, pullSecret: { data: VALID_PULL_SECRET }, ...spec },
      status: { conditions: fixture.status.conditions.map((c) => ({ ...c, observed_generation: 1 })) },
    });
    kube.createNamespace(`clusters-${cluster.id}`);
    return cluster;
  }

  async function publish(cluster: Cluster): Promise<void> {
    const data = {
      id: cluster.id,
      kind: 'Cluster',
      href: `/api/hyperfleet/v1/clusters/${cluster.id}`,
      generation: cluster.generation,
    };
    const event = {
      specversion: '1.0',
      id: `bundle-${++events}`,
      source: 'hyperfleet-sentinel',
      type: 'com.redhat.hyperfleet.cluster.reconcile',
      data,
    };
    await publisher.publish(Buffer.from(JSON.stringify(event)));
  }

  const metric = async (line: RegExp): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return Number(line.exec(text)?.[1] ?? 0);
  };
  const waitFor = (id: string, conditionType: string, expected: string) =>
    until(
      `${conditionType} ${expected} for ${id}`,
      () => {
        if (adapter.exitCode !== null) throw new Error(`the adapter exited (${adapter.exitCode})`);
        return condition(statusOf(id), conditionType) === expected;
      },
      60_000,
    ).catch((err: Error) => assert.fail(`${err.message}\nadapter output:\n${output}`));

  before(async () => {
    [bundle, emulator, api, gcp, kube, aws, azure] = await Promise.all([
      buildBundle(['run-job', 'adapter', 'main']),
      startPubSubEmulator(),
      startHyperFleetApiStandIn({}),
      startSecretManagerTestServer({ project: PROJECT }),
      startKubernetesTestServer(),
      startAwsSecretsManagerTestServer({ region: 'eu-west-1' }),
      startKeyVaultTestServer(),
    ]);
    dir = await mkdtemp(join(tmpdir(), 'ps-adapter-bundle-'));
    metricsPort = await freePort();
    const config = {
      hyperfleetApi: { baseUrl: api.url, timeoutMs: 5000 },
      broker: brokerConfig(),
      providers: {
        gcp: { settings: { endpoint: gcp.address, insecure: true, callTimeoutMs: 10_000 } },
        aws: { settings: { endpoint: aws.endpoint, callTimeoutMs: 10_000 } },
        azure: { settings: { caFile: azure.caFile, callTimeoutMs: 10_000 } },
      },
      kubernetes: { target: 'api', kubeconfig: kube.kubeconfigPath },
      server: { healthPort: 0, metricsPort, host: '127.0.0.1', drainSeconds: 2 },
    };
    await writeFile(join(dir, 'adapter.yaml'), JSON.stringify(config));
    const identity = azureIdentity(azure);
    await readableByImageUser(
      join(dir, 'adapter.yaml'),
      kube.kubeconfigPath,
      azure.caFile,
      identity.AZURE_FEDERATED_TOKEN_FILE ?? azure.caFile,
    );
    // Creates the topic and the subscription before the adapter listens, as the deployment's set-up does.
    publisher = await createBroker(brokerConfig());
    adapter = spawn(process.execPath, [bundle.executable, 'adapter', '--config', join(dir, 'adapter.yaml')], {
      // --pending-deprecation: Node.js 20 then warns where Node.js 22 (the image's runtime) does, e.g. a
      // dependency's require of the core `punycode` module (DEP0040), a non-JSON line in the pod's log.
      env: baseEnv({ HOME: dir, NODE_OPTIONS: '--pending-deprecation', ...awsTestEnv(), ...identity }),
      stdio: ['ignore', 'pipe', 'pipe'],
      ...imageUser(),
    });
    adapter.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    adapter.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  });
  after(async () => {
    if (adapter !== undefined && adapter.exitCode === null) {
      adapter.kill('SIGKILL');
      await once(adapter, 'exit');
    }
    await publisher?.stop();
    await Promise.all([
      emulator?.stop(),
      api?.stop(),
      gcp?.stop(),
      kube?.close(),
      aws?.stop(),
      azure?.stop(),
      bundle?.remove(),
    ]);
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  test('stores, provisions, finds nothing to do, restores a deleted Secret', async () => {
    const cluster = await seedCluster();
    await publish(cluster);
    await waitFor(cluster.id, 'Available', 'True/SecretAvailable');
    assert.equal(gcp.calls.AddSecretVersion, 1, 'one version stored');
    assert.equal(payloadOf(cluster.id), VALID_PULL_SECRET, 'the Secret holds the pull secret');

    // The same event again: one access call, no write anywhere.
    await until(
      'the Secret in the informer cache',
      async () => (await metric(/^pullsecret_kubernetes_cache_objects\{resource="secrets"\} (\d+)/m)) >= 1,
    );
    gcp.resetCalls();
    kube.resetCalls();
    const before = statusOf(cluster.id)?.last_report_time;
    await publish(cluster);
    await until('a second report', () => statusOf(cluster.id)?.last_report_time !== before, 60_000);
    assert.equal(condition(statusOf(cluster.id), 'Applied'), 'True/SecretUpToDate');
    assert.deepEqual(
      Object.entries(gcp.calls).filter(([, n]) => n > 0),
      [['AccessSecretVersion', 1]],
    );
    assert.deepEqual(
      kube.requests().filter((r) => !r.path.includes('watch=')),
      [],
      'no Kubernetes API call on a no-op',
    );

    // Someone deletes the Secret: the watch in the bundle brings it back, no event needed.
    kube.deleteObject('secrets', `clusters-${cluster.id}`, `${cluster.id}-pull-secret`);
    await until('the Secret restored', () => payloadOf(cluster.id) === VALID_PULL_SECRET, 30_000).catch(
      (err: Error) => assert.fail(`${err.message}\nadapter output:\n${output}`),
    );
  });

  test('clusters on AWS and Azure: their stores load from the bundle and store the pull secret', async () => {
    const onAws = await seedCluster('aws', {
      aws: { accountId: TEST_CREDENTIALS.accountId, region: 'eu-west-1' },
    });
    const onAzure = await seedCluster('azure', { azure: { keyVaultUrl: azure.url } });
    await Promise.all([publish(onAws), publish(onAzure)]);
    await Promise.all([
      waitFor(onAws.id, 'Available', 'True/SecretAvailable'),
      waitFor(onAzure.id, 'Available', 'True/SecretAvailable'),
    ]);
    assert.equal(
      aws.state.find(TEST_CREDENTIALS.accountId, `hyperfleet-${onAws.id}-pull-secret`)?.versions[0]?.string,
      VALID_PULL_SECRET,
    );
    assert.equal(
      azure.state.live(`hyperfleet-${onAzure.id}-pull-secret`).versions.at(-1)?.value,
      VALID_PULL_SECRET,
    );
    assert.equal(payloadOf(onAws.id), VALID_PULL_SECRET);
    assert.equal(payloadOf(onAzure.id), VALID_PULL_SECRET);
  });

  test('drains on SIGTERM and exits 0, with no stray error', async () => {
    adapter.kill('SIGTERM');
    const [code] = (await once(adapter, 'exit')) as [number | null];
    assert.equal(code, 0, output);
    assert.ok(!output.includes('stray error caught by the process guard'), output);
    assert.ok(!output.includes('    at '), 'no raw stack trace');
    // Except url.parse() in node-fetch 2 (under @kubernetes/client-node), DEP0169, which Node.js 22 may emit; process warnings
    // are logged as JSON lines (src/brokers/pubsub/warnings.ts), with the code in their `code` field.
    const deprecations = output
      .split('\n')
      .filter((line) => line.includes('DeprecationWarning') && !line.includes('DEP0169'));
    assert.deepEqual(deprecations, [], 'no deprecation warning on the image runtime');
  });

  test("no class of this project's code is renamed in the bundle: its `.name` stays", async () => {
    // The bundle does not pin names (scripts/bundle.mjs): a class esbuild renamed to avoid a clash
    // between modules has a digit appended, a name its source file does not hold. (A renamed function
    // shows its new name only in a stack trace.)
    const renamed: string[] = [];
    const declaration = /\bclass\s+([A-Za-z_$][\w$]*\d)\b|\b([A-Za-z_$][\w$]*\d)=class\b/g;
    for (const file of await jsFiles(join(bundle.dir, 'bundle'))) {
      const lines = (await readFile(file, 'utf8')).split('\n');
      const map = new SourceMap(JSON.parse(await readFile(`${file}.map`, 'utf8')) as SourceMapPayload);
      lines.forEach((text, line) => {
        for (const match of text.matchAll(declaration)) {
          const name = match[1] ?? match[2] ?? '';
          const entry = map.findEntry(line, match.index + match[0].indexOf(name));
          const source = 'originalSource' in entry ? entry.originalSource : '';
          if (!source.includes('/src/') || source.includes('/node_modules/')) continue;
          if (
            !new RegExp(`\\b${name.replaceAll('$', '\\$')}\\b`).test(
              readFileSync(resolve(dirname(file), source), 'utf8'),
            )
          )
            renamed.push(`${name} (${source})`);
        }
      });
    }
    assert.deepEqual(renamed, []);
  });

  test('help and configuration errors: same output, same exit codes as main.ts', async () => {
    const cases = [
      ['adapter', '--help'],
      ['adapter', '--config', join(tmpdir(), 'no-such-adapter-config.yaml')],
      ['adapter', '--no-such-option'],
    ];
    for (const args of cases) {
      const [bundled, main] = await Promise.all([
        runNode([bundle.executable, ...args], baseEnv(), imageUser()),
        runCli(args, baseEnv()),
      ]);
      assert.equal(bundled.code, main.code, args.join(' '));
      assert.equal(bundled.stdout, main.stdout, args.join(' '));
      assert.equal(bundled.stderr, main.stderr, args.join(' '));
    }
  });
});

/** The workload identity variables of the Key Vault test server (the vault URL comes from the cluster, its CA from the config). */
function azureIdentity(server: KeyVaultTestServer): Record<string, string | undefined> {
  const { AZURE_KEY_VAULT_URL: _url, AZURE_KEY_VAULT_CA_FILE: _ca, ...identity } = server.env();
  return identity;
}
