// GCP customer-managed encryption keys (CMEK): the store asks for automatic replication under the
// configured key, the configuration refuses a key automatic replication cannot take, and the test
// server enforces the key's form over the wire as the service does. Loopback only, no credentials.
process.env.METADATA_SERVER_DETECTION = 'none';

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { gcpStoreFactory } from '../../src/stores/gcp-secret-manager/index.js';
import { parseStoreEnv } from '../../src/stores/registry.js';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../servers/gcp-secret-manager/index.js';
import { secretManagerServiceDefinition } from '../servers/gcp-secret-manager/service-definition.js';

const PROJECT = 'cmek-project-1';
const KEY = `projects/${PROJECT}/locations/global/keyRings/hyperfleet/cryptoKeys/pull-secrets`;
const LABELS = {
  'managed-by': 'hyperfleet',
  adapter: 'pullsecret',
  'cluster-id': 'c1',
  'resource-type': 'pull-secret',
  'hyperfleet-version': 'v1',
};

describe('GCP customer-managed encryption keys', () => {
  let server: SecretManagerTestServer;
  before(async () => (server = await startSecretManagerTestServer({ project: PROJECT })));
  after(async () => server?.stop());

  const storeWith = (kmsKeyName?: string) =>
    gcpStoreFactory.create(
      gcpStoreFactory.configSchema.parse({
        projectId: PROJECT,
        endpoint: server.address,
        insecure: true,
        callTimeoutMs: 5000,
        ...(kmsKeyName ? { kmsKeyName } : {}),
      }),
    );

  test('a store with kmsKeyName creates secrets under the key; without, plain automatic replication', async () => {
    const keyed = await storeWith(KEY);
    const plain = await storeWith();
    try {
      await keyed.createSecret('keyed', LABELS);
      await plain.createSecret('plain', LABELS);
      assert.deepEqual(server.state.findSecret('keyed')?.replication, {
        automatic: { customerManagedEncryption: { kmsKeyName: KEY } },
      });
      assert.deepEqual(server.state.findSecret('plain')?.replication, { automatic: {} });
    } finally {
      await keyed.close();
      await plain.close();
    }
  });

  test('the key is checked up front (GCP_KMS_KEY_NAME of the job too), never echoed', () => {
    for (const bad of [
      'not-a-key',
      `projects/${PROJECT}/locations/us-east1/keyRings/r/cryptoKeys/k`,
      `${KEY}/cryptoKeyVersions/1`,
    ]) {
      const parsed = gcpStoreFactory.configSchema.safeParse({ projectId: PROJECT, kmsKeyName: bad });
      assert.equal(parsed.success, false, bad);
      assert.ok(!JSON.stringify(parsed.error?.issues).includes(bad));
      assert.match(parsed.error?.issues[0]?.message ?? '', /global/);
      const fromEnv = parseStoreEnv('gcp', { GCP_PROJECT_ID: PROJECT, GCP_KMS_KEY_NAME: bad });
      assert.deepEqual(fromEnv.ok ? [] : fromEnv.invalid.map((line) => line.split(':')[0]), [
        'invalid environment variable GCP_KMS_KEY_NAME',
      ]);
    }
    const ok = parseStoreEnv('gcp', { GCP_PROJECT_ID: PROJECT, GCP_KMS_KEY_NAME: KEY });
    assert.equal(ok.ok && (ok.value as { kmsKeyName?: string }).kmsKeyName, KEY);
    assert.deepEqual(
      gcpStoreFactory.validate({ kmsKeyName: KEY }),
      [],
      'an adapter-wide default key is a shared setting',
    );
  });

  test('the test server refuses a malformed or regional key with INVALID_ARGUMENT, as the service', async () => {
    const Client = grpc.makeClientConstructor(secretManagerServiceDefinition(), 'SecretManagerService');
    const client = new Client(server.address, grpc.credentials.createInsecure());
    const create = (secretId: string, kmsKeyName: string) =>
      new Promise<grpc.ServiceError | null>((resolve) =>
        (
          client as unknown as Record<string, (r: unknown, cb: (e: grpc.ServiceError | null) => void) => void>
        ).CreateSecret!.call(
          client,
          {
            parent: `projects/${PROJECT}`,
            secretId,
            secret: { replication: { automatic: { customerManagedEncryption: { kmsKeyName } } } },
          },
          resolve,
        ),
      );
    try {
      assert.match(
        (await create('regional', `projects/${PROJECT}/locations/us-east1/keyRings/r/cryptoKeys/k`))
          ?.details ?? '',
        /global location/,
      );
      assert.equal((await create('malformed', 'keyRings/r'))?.code, grpc.status.INVALID_ARGUMENT);
      assert.equal(server.state.findSecret('regional'), undefined);
      assert.equal(await create('wire-keyed', KEY), null);
      assert.equal(
        server.state.findSecret('wire-keyed')?.replication.automatic?.customerManagedEncryption?.kmsKeyName,
        KEY,
      );
    } finally {
      client.close();
    }
  });
});
