import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { gcpStoreFactory } from '../../src/stores/gcp-secret-manager/index.js';
import { LocalStore } from '../../src/stores/local/index.js';
import type { SecretStore } from '../../src/stores/store.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import { awsStoreFactory } from '../../src/stores/aws-secrets-manager/index.js';
import { startAwsSecretsManagerTestServer, TEST_CREDENTIALS } from '../servers/aws-secrets-manager/index.js';
import { azureStoreFactory } from '../../src/stores/azure-key-vault/index.js';
import { startKeyVaultTestServer, type KeyVaultTestServer } from '../servers/azure-key-vault/index.js';

/**
 * What the store contract suite needs from each store: the real store client, plus test-side
 * powers the contract itself does not offer (seeding a foreign secret, disabling a version,
 * injecting faults, counting calls).
 */
export interface StoreHarness {
  kind: string;
  store: SecretStore;
  /** Creates a secret behind the store's back, with these labels and one version. */
  seedForeign(secretId: string, labels: Record<string, string>, data: string): Promise<void>;
  disableVersion(secretId: string, version: string): Promise<void>;
  /** Makes the next call of a step fail with a transient error; `applied` = the write happened. */
  injectTransient?(
    operation: 'getSecret' | 'createSecret' | 'addVersion' | 'accessLatest',
    applied?: boolean,
  ): void;
  /** Makes the next call fail permanently (permission denied). */
  injectPermissionDenied?(operation: 'getSecret' | 'accessLatest'): void;
  /** Store calls made so far, when the store can count them. */
  calls?(): number;
  /** Backend calls a contract method makes beyond one, where the store needs more (GCP: a create with its first version is two). */
  extraCalls?: Partial<Record<'createSecret' | 'addVersion', number>>;
  /** What a refused payload read names as missing (GCP: the IAM permission; AWS: the IAM action). */
  accessPermission?: RegExp;
  /** Some contract methods make a varying number of backend calls (Key Vault), so `calls` is not counted per method. */
  multiCallMethods?: boolean;
  /** A second, independent client on the same data (another process, for races). */
  second(): Promise<SecretStore>;
  dispose(): Promise<void>;
}

export async function localHarness(): Promise<StoreHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-contract-local-'));
  const store = new LocalStore({ dir });
  const others: LocalStore[] = [];
  return {
    kind: 'local',
    store,
    async seedForeign(secretId, labels, data) {
      await store.createSecret(secretId, labels);
      await store.addVersion(secretId, Buffer.from(data));
    },
    async disableVersion(secretId, version) {
      await store.disableVersion(secretId, version);
    },
    async second() {
      const other = new LocalStore({ dir });
      others.push(other);
      return other;
    },
    async dispose() {
      await Promise.all([store, ...others].map((s) => s.close()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const GRPC_METHOD = {
  getSecret: 'GetSecret',
  createSecret: 'CreateSecret',
  addVersion: 'AddSecretVersion',
  accessLatest: 'AccessSecretVersion',
} as const;

export async function gcpHarness(): Promise<StoreHarness> {
  process.env.METADATA_SERVER_DETECTION = 'none';
  const server: SecretManagerTestServer = await startSecretManagerTestServer({ project: 'contract-project' });
  const make = () =>
    gcpStoreFactory.create({
      projectId: 'contract-project',
      endpoint: server.address,
      insecure: true,
      callTimeoutMs: 5000,
    });
  const store = await make();
  const clients = clientPool(store, make);
  return {
    kind: 'gcp',
    store,
    async seedForeign(secretId, labels, data) {
      server.state.seedSecret(secretId, { labels, versions: [{ data }] });
    },
    async disableVersion(secretId, version) {
      server.state.setState(secretId, Number(version), 'DISABLED');
    },
    injectTransient(operation, applied = false) {
      server.injectFault({ method: GRPC_METHOD[operation], code: status.UNAVAILABLE, afterApply: applied });
    },
    injectPermissionDenied(operation) {
      server.injectFault({ method: GRPC_METHOD[operation], code: status.PERMISSION_DENIED });
    },
    calls: () => server.totalCalls,
    extraCalls: { createSecret: 1 },
    accessPermission: /secretmanager\.versions\.access/,
    second: clients.second,
    async dispose() {
      await clients.closeAll();
      await server.stop();
    },
  };
}

const AWS_OPERATION = {
  getSecret: 'DescribeSecret',
  createSecret: 'CreateSecret',
  addVersion: 'PutSecretValue',
  accessLatest: 'GetSecretValue',
} as const;

/** Environment of a process that drives the AWS SDK against the test server: static test keys, loopback only. */
export function awsTestEnv(): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    AWS_EC2_METADATA_DISABLED: 'true',
    // Node 20 here: the SDK's multi-line notice about Node 22 would break the one-JSON-object-a-line stderr.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
}

export async function awsHarness(): Promise<StoreHarness> {
  Object.assign(process.env, awsTestEnv());
  const server = await startAwsSecretsManagerTestServer();
  const make = () =>
    awsStoreFactory.create({
      accountId: TEST_CREDENTIALS.accountId,
      region: server.region,
      endpoint: server.endpoint,
      callTimeoutMs: 5000,
    });
  const store = await make();
  const clients = clientPool(store, make);
  return {
    kind: 'aws',
    store,
    async seedForeign(secretId, labels, data) {
      server.state.seed(TEST_CREDENTIALS.accountId, secretId, { tags: labels, values: [data] });
    },
    async disableVersion(secretId, version) {
      server.state.deprecate(TEST_CREDENTIALS.accountId, secretId, version);
    },
    injectTransient(operation, applied = false) {
      server.injectFault({
        operation: AWS_OPERATION[operation],
        type: 'InternalServiceError',
        afterApply: applied,
      });
    },
    injectPermissionDenied(operation) {
      server.injectFault({ operation: AWS_OPERATION[operation], type: 'AccessDeniedException' });
    },
    calls: () => server.totalCalls,
    extraCalls: { addVersion: 2 },
    accessPermission: /secretsmanager:GetSecretValue/,
    second: clients.second,
    async dispose() {
      await clients.closeAll();
      await server.stop();
    },
  };
}

/** The harness's store plus the second clients `second()` made, closed together. */
function clientPool(store: SecretStore, make: () => Promise<SecretStore>) {
  const others: SecretStore[] = [];
  return {
    second: async () => {
      const other = await make();
      others.push(other);
      return other;
    },
    closeAll: () => Promise.all([store, ...others].map((s) => s.close())),
  };
}

/** The Key Vault operation that fails for a step (a create's or an add's fault hits its SetSecret). */
const KV_OPERATION = {
  getSecret: 'GetSecret',
  createSecret: 'SetSecret',
  addVersion: 'SetSecret',
  accessLatest: 'GetSecret',
} as const;

/**
 * Points `DefaultAzureCredential` (workload identity) at the server's token endpoint, for this
 * process: the production credential path, on loopback.
 */
export function useKeyVaultIdentity(server: KeyVaultTestServer): void {
  const { AZURE_KEY_VAULT_URL: _url, AZURE_KEY_VAULT_CA_FILE: _ca, ...identity } = server.env();
  Object.assign(process.env, identity);
}

/** A store client on `server` (the CA trusted in-process through AZURE_KEY_VAULT_CA_FILE's setting). */
export function keyVaultStore(
  server: KeyVaultTestServer,
  extra: { callTimeoutMs?: number } = {},
): Promise<SecretStore> {
  useKeyVaultIdentity(server);
  return azureStoreFactory.create({
    vaultUrl: server.url,
    caFile: server.caFile,
    callTimeoutMs: extra.callTimeoutMs ?? 5000,
    recoverPollMs: 10,
  });
}

export async function azureHarness(): Promise<StoreHarness> {
  const server: KeyVaultTestServer = await startKeyVaultTestServer();
  const store = await keyVaultStore(server);
  const clients = clientPool(store, () => keyVaultStore(server));
  return {
    kind: 'azure',
    store,
    async seedForeign(secretId, labels, data) {
      server.state.seed(secretId, [{ value: data, tags: labels, contentType: 'application/json' }]);
    },
    async disableVersion(secretId, version) {
      server.state.update(secretId, version, { attributes: { enabled: false } });
    },
    injectTransient(operation, applied = false) {
      server.injectFault(
        applied
          ? { operation: KV_OPERATION[operation], drop: true, afterApply: true }
          : { operation: KV_OPERATION[operation], status: 503 },
      );
    },
    injectPermissionDenied(operation) {
      server.injectFault({ operation: KV_OPERATION[operation], status: 403 });
    },
    calls: () => server.totalCalls,
    multiCallMethods: true,
    accessPermission: /secrets\/get/,
    second: clients.second,
    async dispose() {
      await clients.closeAll();
      await server.stop();
    },
  };
}

/** Every store the contract suite runs against. */
export const HARNESSES: ReadonlyArray<[string, () => Promise<StoreHarness>]> = [
  ['local', localHarness],
  ['gcp', gcpHarness],
  ['aws', awsHarness],
  ['azure', azureHarness],
];
