import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { gcpStoreFactory } from '../../src/stores/gcp-secret-manager/index.js';
import { LocalStore } from '../../src/stores/local/index.js';
import type { SecretStore } from '../../src/stores/store.js';
import { startSecretManagerTestServer, type SecretManagerTestServer } from '../servers/gcp-secret-manager/index.js';
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
  injectTransient?(operation: 'getSecret' | 'createSecret' | 'addVersion' | 'accessLatest', applied?: boolean): void;
  /** Makes the next call fail permanently (permission denied). */
  injectPermissionDenied?(operation: 'getSecret' | 'accessLatest'): void;
  /** Store calls made so far, when the store can count them. */
  calls?(): number;
  /** Some contract methods make more than one backend call (Key Vault), so `calls` is not one per method. */
  multiCallMethods?: boolean;
  /** What a permission-denied message names (the right or permission to grant). */
  permissionText?: RegExp;
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

const GRPC_METHOD = { getSecret: 'GetSecret', createSecret: 'CreateSecret', addVersion: 'AddSecretVersion', accessLatest: 'AccessSecretVersion' } as const;

export async function gcpHarness(): Promise<StoreHarness> {
  process.env.METADATA_SERVER_DETECTION = 'none';
  const server: SecretManagerTestServer = await startSecretManagerTestServer({ project: 'contract-project' });
  const make = () => gcpStoreFactory.create({ projectId: 'contract-project', endpoint: server.address, insecure: true, callTimeoutMs: 5000 });
  const store = await make();
  const others: SecretStore[] = [];
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
    permissionText: /secretmanager\.versions\.access/,
    async second() {
      const other = await make();
      others.push(other);
      return other;
    },
    async dispose() {
      await Promise.all([store, ...others].map((s) => s.close()));
      await server.stop();
    },
  };
}

/** The Key Vault operation that fails for a step (a create's or an add's fault hits its SetSecret). */
const KV_OPERATION = { getSecret: 'GetSecret', createSecret: 'SetSecret', addVersion: 'SetSecret', accessLatest: 'GetSecret' } as const;

/**
 * Points `DefaultAzureCredential` (workload identity) at the server's token endpoint, for this
 * process: the production credential path, on loopback.
 */
export function useKeyVaultIdentity(server: KeyVaultTestServer): void {
  const { AZURE_KEY_VAULT_URL: _url, AZURE_KEY_VAULT_CA_FILE: _ca, ...identity } = server.env();
  Object.assign(process.env, identity);
}

/** A store client on `server` (the CA trusted in-process through AZURE_KEY_VAULT_CA_FILE's setting). */
export function keyVaultStore(server: KeyVaultTestServer, extra: { callTimeoutMs?: number } = {}): Promise<SecretStore> {
  useKeyVaultIdentity(server);
  return azureStoreFactory.create({ vaultUrl: server.url, caFile: server.caFile, callTimeoutMs: extra.callTimeoutMs ?? 5000, recoverPollMs: 10 });
}

export async function azureHarness(): Promise<StoreHarness> {
  const server: KeyVaultTestServer = await startKeyVaultTestServer();
  const store = await keyVaultStore(server);
  const others: SecretStore[] = [];
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
      server.injectFault(applied ? { operation: KV_OPERATION[operation], drop: true, afterApply: true } : { operation: KV_OPERATION[operation], status: 503 });
    },
    injectPermissionDenied(operation) {
      server.injectFault({ operation: KV_OPERATION[operation], status: 403 });
    },
    calls: () => server.totalCalls,
    multiCallMethods: true,
    permissionText: /secrets\/get/,
    async second() {
      const other = await keyVaultStore(server);
      others.push(other);
      return other;
    },
    async dispose() {
      await Promise.all([store, ...others].map((s) => s.close()));
      await server.stop();
    },
  };
}

/** Every store the contract suite runs against. */
export const HARNESSES: ReadonlyArray<[string, () => Promise<StoreHarness>]> = [
  ['local', localHarness],
  ['gcp', gcpHarness],
  ['azure', azureHarness],
];
