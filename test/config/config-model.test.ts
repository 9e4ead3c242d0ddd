// One configuration model for job and adapter (src/config/): the documented precedence of our
// variables, HyperFleet's conventions, the config file and defaults; the store chosen from its
// variables; the job environment as a projection of the adapter's configuration.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadAdapterConfig, validateAdapterConfig } from '../../src/adapter/config.js';
import { projectJobEnv } from '../../src/stores/config-env.js';
import { PullSecretError } from '../../src/errors/index.js';
import { loadJobConfig } from '../../src/job/config.js';
import { selectStoreKind } from '../../src/stores/registry.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';

let dir: string;
before(async () => (dir = await mkdtemp(join(tmpdir(), 'ps-config-model-'))));
after(async () => rm(dir, { recursive: true, force: true }));

let n = 0;
async function yamlFile(content: unknown): Promise<string> {
  const path = join(dir, `file-${++n}.yaml`);
  await writeFile(path, stringify(content));
  return path;
}

async function refused(promise: Promise<unknown>, pattern: RegExp): Promise<string> {
  const err = await promise.then(
    () => assert.fail('expected a configuration error'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof PullSecretError);
  assert.equal(err.code, 'CONFIG_INVALID');
  assert.match(err.message, pattern);
  return err.message;
}

const RABBIT_FILE = {
  hyperfleetApi: { baseUrl: 'http://from-file:8000' },
  broker: {
    type: 'rabbitmq',
    url: 'amqp://file@rabbit:5672',
    exchange: 'hyperfleet-clusters',
    topic: 'topic-file',
    subscriptionId: 'sub-file',
    maxInFlight: 2,
  },
};

describe('precedence: our env > HyperFleet env > BROKER_CONFIG_FILE > config file > defaults', () => {
  test('each layer wins over the ones below it, key by key', async () => {
    const file = await yamlFile(RABBIT_FILE);
    const brokerYaml = await yamlFile({
      broker: {
        type: 'rabbitmq',
        rabbitmq: {
          url: 'amqp://brokeryaml@rabbit:5672',
          prefetch_count: 5,
          exchange_type: 'topic',
          publisher_confirm: true,
        },
      },
    });

    const fileOnly = await loadAdapterConfig(file, {});
    assert.equal(fileOnly.broker.type === 'rabbitmq' && fileOnly.broker.url, 'amqp://file@rabbit:5672');
    assert.equal(fileOnly.execution.retry.maxAttempts, 4, 'defaults fill what no layer sets');

    const withBrokerYaml = await loadAdapterConfig(file, { BROKER_CONFIG_FILE: brokerYaml });
    assert.equal(
      withBrokerYaml.broker.type === 'rabbitmq' && withBrokerYaml.broker.url,
      'amqp://brokeryaml@rabbit:5672',
    );
    assert.equal(withBrokerYaml.broker.maxInFlight, 5);
    assert.equal(
      withBrokerYaml.broker.type === 'rabbitmq' && withBrokerYaml.broker.topic,
      'topic-file',
      'keys the broker file does not set stay',
    );

    const hyperfleetEnv = {
      BROKER_CONFIG_FILE: brokerYaml,
      BROKER_RABBITMQ_URL: 'amqp://hfenv@rabbit:5672',
      SUBSCRIBER_PARALLELISM: '7',
      HYPERFLEET_BROKER_TOPIC: 'topic-hf',
      HYPERFLEET_BROKER_SUBSCRIPTION_ID: 'sub-hf',
      HYPERFLEET_API_BASE_URL: 'http://from-hf:8000',
      HYPERFLEET_API_VERSION: 'v1',
    };
    const withHyperfleet = await loadAdapterConfig(file, hyperfleetEnv);
    assert.deepEqual(
      withHyperfleet.broker.type === 'rabbitmq' && [
        withHyperfleet.broker.url,
        withHyperfleet.broker.topic,
        withHyperfleet.broker.subscriptionId,
        withHyperfleet.broker.maxInFlight,
      ],
      ['amqp://hfenv@rabbit:5672', 'topic-hf', 'sub-hf', 7],
    );
    assert.equal(withHyperfleet.hyperfleetApi.baseUrl, 'http://from-hf:8000');

    const ours = await loadAdapterConfig(file, {
      ...hyperfleetEnv,
      BROKER_URL: 'amqp://ours@rabbit:5672',
      BROKER_TOPIC: 'topic-ours',
      HYPERFLEET_API_URL: 'http://ours:8000',
    });
    assert.deepEqual(
      ours.broker.type === 'rabbitmq' && [ours.broker.url, ours.broker.topic, ours.broker.subscriptionId],
      ['amqp://ours@rabbit:5672', 'topic-ours', 'sub-hf'],
    );
    assert.equal(ours.hyperfleetApi.baseUrl, 'http://ours:8000');
  });

  test('the RabbitMQ delivery settings: routing_key of a broker.yaml is the publisher key, as in the library; our variables win', async () => {
    const file = await yamlFile(RABBIT_FILE);
    const rabbitmq = {
      url: 'amqp://brokeryaml@rabbit:5672',
      routing_key: '#',
      queue: 'ns-clusters-pullsecret',
      exchange_type: 'fanout',
    };
    const brokerYaml = await yamlFile({ broker: { type: 'rabbitmq', rabbitmq } });
    const fromFile = await loadAdapterConfig(file, { BROKER_CONFIG_FILE: brokerYaml });
    const settings = (b: typeof fromFile.broker) =>
      b.type === 'rabbitmq' && [
        b.bindingKey,
        b.routingKey,
        b.queue,
        b.exchangeType,
        b.queueType,
        b.maxDeliveries,
      ];
    assert.deepEqual(settings(fromFile.broker), ['', '#', 'ns-clusters-pullsecret', 'fanout', undefined, 10]);
    const ours = await loadAdapterConfig(file, {
      BROKER_CONFIG_FILE: brokerYaml,
      BROKER_BINDING_KEY: '#',
      BROKER_QUEUE_TYPE: 'classic',
      BROKER_MAX_DELIVERIES: '3',
    });
    assert.deepEqual(
      ours.broker.type === 'rabbitmq' && [
        ours.broker.bindingKey,
        ours.broker.queueType,
        ours.broker.maxDeliveries,
      ],
      ['#', 'classic', 3],
    );
  });

  test('a broker.yaml for Google Pub/Sub over a RabbitMQ file switches the broker and keeps only what Pub/Sub knows', async () => {
    const file = await yamlFile(RABBIT_FILE);
    const brokerYaml = await yamlFile({
      broker: {
        type: 'googlepubsub',
        rabbitmq: { url: 'amqp://ignored@rabbit:5672' },
        googlepubsub: {
          project_id: 'platform-project',
          ack_deadline_seconds: 60,
          retry_min_backoff: '10s',
          retry_max_backoff: '10m',
          dead_letter_topic: 'ignored-dlq',
          dead_letter_max_attempts: 7,
          max_outstanding_messages: 100,
          num_goroutines: 10,
          create_topic_if_missing: false,
          create_subscription_if_missing: false,
        },
      },
      subscriber: { parallelism: 4 },
      log_config: false,
    });
    const config = await loadAdapterConfig(file, {
      BROKER_CONFIG_FILE: brokerYaml,
      BROKER_GOOGLEPUBSUB_SUBSCRIPTION: 'pullsecret-adapter',
    });
    assert.equal(config.broker.type, 'pubsub');
    if (config.broker.type !== 'pubsub') return;
    assert.deepEqual(
      [
        config.broker.projectId,
        config.broker.topic,
        config.broker.subscriptionId,
        config.broker.ackDeadlineSeconds,
        config.broker.retryMinBackoffSeconds,
        config.broker.retryMaxBackoffSeconds,
        config.broker.maxDeliveryAttempts,
        config.broker.maxInFlight,
        config.broker.createIfMissing,
      ],
      ['platform-project', 'topic-file', 'pullsecret-adapter', 60, 10, 600, 7, 4, false],
    );
    assert.equal('url' in config.broker, false, 'the RabbitMQ URL of the file is dropped with its type');
    const viaEnvType = await loadAdapterConfig(file, {
      BROKER_TYPE: 'googlepubsub',
      BROKER_GOOGLEPUBSUB_PROJECT_ID: 'platform-project',
    });
    assert.equal(viaEnvType.broker.type, 'pubsub', "BROKER_TYPE accepts HyperFleet's googlepubsub");
  });

  test('what the HyperFleet conventions cannot mean is refused with its path, never with a value', async () => {
    const file = await yamlFile(RABBIT_FILE);
    const typo = await yamlFile({
      broker: { type: 'rabbitmq', rabbitmq: { urll: 'amqp://secret-password@x' } },
    });
    const message = await refused(
      loadAdapterConfig(file, { BROKER_CONFIG_FILE: typo }),
      /hyperfleet-broker\.broker\.rabbitmq/,
    );
    assert.ok(!message.includes('secret-password'));
    const headers = await yamlFile({ broker: { rabbitmq: { exchange_type: 'headers' } } });
    await refused(
      loadAdapterConfig(file, { BROKER_CONFIG_FILE: headers }),
      /exchange_type: must be topic or fanout/,
    );
    await refused(
      loadAdapterConfig(file, { HYPERFLEET_API_VERSION: 'v2' }),
      /HYPERFLEET_API_VERSION: must be one of v1/,
    );
    await refused(
      loadAdapterConfig(file, { BROKER_CONFIG_FILE: join(dir, 'absent.yaml') }),
      /the broker config file \(BROKER_CONFIG_FILE\) \S+ does not exist/,
    );
  });
});

describe('store settings: the same variables for job and adapter', () => {
  const base = { hyperfleetApi: { baseUrl: 'http://api:8000' }, broker: { type: 'embedded' } };

  test("the adapter reads SECRET_MANAGER_ENDPOINT and friends, and only the selected store's", async () => {
    const gcpFile = await yamlFile({ ...base, store: { type: 'gcp' } });
    const env = {
      SECRET_MANAGER_ENDPOINT: 'sm.internal:443',
      GCP_CALL_TIMEOUT_MS: '5000',
      LOCAL_STORE_DIR: '/tmp/pull-secret/store',
      GCP_PROJECT_ID: 'my-project-1',
    };
    const config = await loadAdapterConfig(gcpFile, env);
    assert.deepEqual(
      config.store.settings,
      { endpoint: 'sm.internal:443', callTimeoutMs: '5000' },
      'no local setting, no project (each cluster names it)',
    );
    const inferred = await loadAdapterConfig(await yamlFile(base), {
      SECRET_MANAGER_ENDPOINT: 'sm.internal:443',
    });
    assert.equal(inferred.store.type, 'gcp', 'a GCP variable chooses the GCP store');
    const local = await loadAdapterConfig(await yamlFile(base), { LOCAL_STORE_DIR: '/data/store' });
    assert.deepEqual([local.store.type, local.store.settings], ['local', { dir: '/data/store' }]);
    await refused(
      loadAdapterConfig(await yamlFile({ ...base, store: { type: 'local' } }), {
        SECRET_MANAGER_ENDPOINT: 'sm.internal:443',
      }),
      /store\.type: .*local contradicts SECRET_MANAGER_ENDPOINT/,
    );
    await refused(
      loadAdapterConfig(gcpFile, { SECRET_MANAGER_ENDPOINT: 'no port' }),
      /store\.settings\.endpoint: must be host:port/,
    );
  });

  test('validation checks the store settings without a made-up project, and refuses one in the file', () => {
    assert.equal(validateAdapterConfig({ ...base, store: { type: 'gcp', settings: {} } }).store.type, 'gcp');
    assert.throws(
      () =>
        validateAdapterConfig({ ...base, store: { type: 'gcp', settings: { projectId: 'my-project-1' } } }),
      /store\.settings/,
    );
  });

  test('execution.mode job with a manifests target is refused; KUBERNETES_TARGET defaults alike for job and adapter', async () => {
    assert.throws(
      () =>
        validateAdapterConfig({ ...base, kubernetes: { target: 'manifests' }, execution: { mode: 'job' } }),
      /kubernetes\.target: manifests cannot be used with execution\.mode job/,
    );
    assert.equal(validateAdapterConfig(base).kubernetes.target, 'none');
    const job = { CLUSTER_ID: 'c1', PULL_SECRET_DATA: VALID_PULL_SECRET };
    assert.equal(loadJobConfig(job).kubernetes.target, 'none');
    assert.equal(loadJobConfig({ ...job, MANAGEMENT_NAMESPACE: 'ns' }).kubernetes.target, 'api');
    assert.equal(loadJobConfig({ ...job, KUBERNETES_TARGET: 'manifests' }).kubernetes.target, 'manifests');
    assert.equal(
      (await loadAdapterConfig(await yamlFile(base), { KUBERNETES_TARGET: 'api' })).kubernetes.target,
      'api',
    );
  });

  test('the Job environment is a projection of the adapter config, and the job reads it back to the same settings', () => {
    const config = validateAdapterConfig({
      ...base,
      store: { type: 'gcp', settings: { endpoint: 'sm.internal:443', callTimeoutMs: 5000 } },
      kubernetes: { target: 'api', kubeconfig: '/adapter/only/kubeconfig' },
      execution: { mode: 'job', retry: { maxAttempts: 3, baseDelayMs: 50, maxDelayMs: 500 } },
      logLevel: 'debug',
    });
    const env = projectJobEnv(
      config,
      { kind: 'gcp', settings: config.store.settings },
      { projectId: 'customer-project-1' },
    );
    assert.deepEqual(env, {
      SECRET_STORE: 'gcp',
      KUBERNETES_TARGET: 'api',
      RETRY_MAX_ATTEMPTS: '3',
      RETRY_BASE_DELAY_MS: '50',
      RETRY_MAX_DELAY_MS: '500',
      LOG_LEVEL: 'debug',
      GCP_PROJECT_ID: 'customer-project-1',
      SECRET_MANAGER_ENDPOINT: 'sm.internal:443',
      GCP_CALL_TIMEOUT_MS: '5000',
    });
    const job = loadJobConfig({
      ...env,
      CLUSTER_ID: 'c1',
      PULL_SECRET_DATA: VALID_PULL_SECRET,
      MANAGEMENT_NAMESPACE: 'clusters-c1',
    });
    assert.deepEqual(job.retry, config.execution.retry);
    assert.equal(job.logLevel, config.logLevel);
    assert.deepEqual(job.store, {
      kind: 'gcp',
      config: {
        projectId: 'customer-project-1',
        endpoint: 'sm.internal:443',
        callTimeoutMs: 5000,
        insecure: false,
      },
    });
    assert.equal(job.kubernetes.target, config.kubernetes.target);
  });
});

describe('the Job environment of a cluster, with providers', () => {
  test("SECRET_STORE names the cluster's store; the cluster's settings win over its provider's shared ones", () => {
    const shared = 'projects/adapter-keys-1/locations/global/keyRings/r/cryptoKeys/default';
    const own = 'projects/customer-project-1/locations/global/keyRings/r/cryptoKeys/own';
    const config = validateAdapterConfig({
      hyperfleetApi: { baseUrl: 'http://api:8000' },
      broker: { type: 'embedded' },
      store: { type: 'local', settings: { dir: '/data/store' } },
      providers: {
        gcp: { settings: { endpoint: 'sm.internal:443', kmsKeyName: shared } },
        onprem: { store: 'local' },
      },
      execution: { mode: 'job' },
    });
    const gcp = config.providers.gcp;
    assert.ok(gcp);
    const env = projectJobEnv(
      config,
      { kind: gcp.store, settings: gcp.settings },
      { projectId: 'customer-project-1', kmsKeyName: own },
    );
    assert.equal(env.SECRET_STORE, 'gcp');
    assert.equal(env.GCP_PROJECT_ID, 'customer-project-1');
    assert.equal(env.GCP_KMS_KEY_NAME, own);
    assert.equal(env.SECRET_MANAGER_ENDPOINT, 'sm.internal:443');
    assert.ok(!('LOCAL_STORE_DIR' in env), "another store's settings never reach the Job");
    const job = loadJobConfig({ ...env, CLUSTER_ID: 'c1', PULL_SECRET_DATA: VALID_PULL_SECRET });
    assert.deepEqual(job.store, {
      kind: 'gcp',
      config: {
        projectId: 'customer-project-1',
        endpoint: 'sm.internal:443',
        kmsKeyName: own,
        callTimeoutMs: 30000,
        insecure: false,
      },
    });
    assert.equal(
      projectJobEnv(config, { kind: gcp.store, settings: gcp.settings }, { projectId: 'customer-project-1' })
        .GCP_KMS_KEY_NAME,
      shared,
      'the shared key when the cluster names none',
    );
    const onprem = projectJobEnv(config, {
      kind: 'local',
      settings: config.providers.onprem?.settings ?? {},
    });
    assert.equal(onprem.SECRET_STORE, 'local');
    assert.equal(onprem.LOCAL_STORE_DIR, '/data/store');
    assert.ok(!('GCP_PROJECT_ID' in onprem));
  });
});

describe('what a Job spec may hold', () => {
  test('a secret store setting (LOCAL_STORE_KEY) is never projected into the Job environment', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const config = validateAdapterConfig({
      hyperfleetApi: { baseUrl: 'http://api:8000' },
      broker: { type: 'embedded' },
      store: { type: 'local', settings: { dir: '/data/store', key } },
      kubernetes: { target: 'api' },
      execution: { mode: 'job' },
    });
    const env = projectJobEnv(config, { kind: 'local', settings: config.store.settings });
    assert.equal(env.LOCAL_STORE_DIR, '/data/store');
    assert.ok(!('LOCAL_STORE_KEY' in env));
    assert.ok(!Object.values(env).includes(key));
  });
});

describe('which store: SECRET_STORE, else the store whose variables are set, else local', () => {
  const upstream = {
    GCP_PROJECT_ID: 'customer-prod-12345',
    CLUSTER_ID: 'c1',
    SECRET_NAME: 's',
    PULL_SECRET_DATA: VALID_PULL_SECRET,
    RESULTS_PATH: '/results/adapter-result.json',
    LOG_LEVEL: 'info',
  };

  test("the upstream chart's environment (GCP_PROJECT_ID, no SECRET_STORE) is GCP", () => {
    assert.equal(loadJobConfig(upstream).store.kind, 'gcp');
    assert.equal(
      selectStoreKind({ LOCAL_STORE_DIR: '/tmp/pull-secret/store', GCP_PROJECT_ID: 'p' }),
      'gcp',
      "the image's LOCAL_STORE_DIR does not compete",
    );
    assert.equal(selectStoreKind({}), 'local');
    assert.equal(selectStoreKind({ SECRET_STORE: 'gcp' }), 'gcp');
  });

  test('SECRET_STORE=local with GCP_PROJECT_ID is a contradiction (CONFIG_INVALID, exit 2)', () => {
    assert.throws(
      () => loadJobConfig({ ...upstream, SECRET_STORE: 'local' }),
      (err: unknown) => {
        assert.ok(err instanceof PullSecretError);
        assert.equal(err.code, 'CONFIG_INVALID');
        assert.equal(err.exitCode, 2);
        assert.match(
          err.message,
          /SECRET_STORE: local contradicts GCP_PROJECT_ID, which only the gcp store reads; unset one of them/,
        );
        return true;
      },
    );
  });
});
