// One StoreProvider for every provider: a client per provider and per-cluster settings, token
// buckets per quota scope (store kind and scope values), against the GCP test server on loopback.
process.env.METADATA_SERVER_DETECTION = 'none';

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startSecretManagerTestServer,
  type SecretManagerTestServer,
} from '../../test/servers/gcp-secret-manager/index.js';
import { StoreProvider } from './store-provider.js';

const LABELS = {
  'managed-by': 'hyperfleet',
  adapter: 'pullsecret',
  'cluster-id': 'c1',
  'resource-type': 'pull-secret',
  'hyperfleet-version': 'v1',
};
const KEY = 'projects/project-one/locations/global/keyRings/r/cryptoKeys/k';

let server: SecretManagerTestServer;
let dir: string;
let stores: StoreProvider;
const calls: string[] = [];

before(async () => {
  server = await startSecretManagerTestServer({ project: 'project-one' });
  dir = await mkdtemp(join(tmpdir(), 'ps-provider-'));
  stores = new StoreProvider({
    routes: {
      // One write a minute per project: a second write in the same project waits a minute.
      gcp: {
        kind: 'gcp',
        config: { endpoint: server.address, insecure: true, callTimeoutMs: 5000 },
        writesPerMinute: 1,
      },
      onprem: { kind: 'local', config: { dir } },
    },
    onApiCall: (method, _code, _ms, store) => calls.push(`${store}:${method}`),
  });
});

after(async () => {
  await stores.close();
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

test('a client per provider and distinct cluster settings; the same settings reuse it', async () => {
  const plain = await stores.forTarget({ provider: 'gcp', settings: { projectId: 'project-one' } });
  assert.equal(await stores.forTarget({ provider: 'gcp', settings: { projectId: 'project-one' } }), plain);
  assert.notEqual(
    await stores.forTarget({ provider: 'gcp', settings: { projectId: 'project-one', kmsKeyName: KEY } }),
    plain,
  );
  assert.equal(plain.location, 'projects/project-one');
  const local = await stores.forTarget({ provider: 'onprem', settings: {} });
  assert.equal(local.kind, 'local');
  assert.ok(stores.scoped('gcp') && !stores.scoped('onprem'));
});

test('quotas are paced per scope: clients of one project share its bucket, another project has its own', async () => {
  const plain = await stores.forTarget({ provider: 'gcp', settings: { projectId: 'project-one' } });
  const keyed = await stores.forTarget({
    provider: 'gcp',
    settings: { projectId: 'project-one', kmsKeyName: KEY },
  });
  const other = await stores.forTarget({ provider: 'gcp', settings: { projectId: 'project-two' } });
  await plain.createSecret('first', LABELS);
  await other.createSecret('elsewhere', LABELS);
  // The project's one token is spent by the other client of the same project: this write waits.
  await assert.rejects(keyed.createSecret('second', LABELS, { signal: AbortSignal.timeout(300) }), {
    code: 'ABORTED',
  });
  assert.equal(server.state.findSecret('second'), undefined);
  assert.ok(server.state.findSecret('elsewhere', 'project-two'));
  const local = await stores.forTarget({ provider: 'onprem', settings: {} });
  await local.createSecret('unpaced', LABELS);
  assert.ok(
    calls.includes('gcp:CreateSecret') && calls.some((c) => c.startsWith('local:')),
    'each call is counted under its store',
  );
});

test('an unknown provider or a cluster without its scope is a configuration error, and is not cached', async () => {
  await assert.rejects(stores.forTarget({ provider: 'aws', settings: {} }), {
    code: 'CONFIG_INVALID',
    message: /no store serves provider aws/,
  });
  await assert.rejects(stores.forTarget({ provider: 'gcp', settings: {} }), {
    code: 'CONFIG_INVALID',
    message: /the cluster names no GCP project/,
  });
  await assert.rejects(stores.forTarget({ provider: 'gcp', settings: { projectId: 'Not A Project' } }), {
    code: 'CONFIG_INVALID',
  });
});
