import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PullSecretError } from '../../errors/index.js';
import { createPubSubClient, loadCredentials } from './credentials.js';

const PROJECT_ENV = ['GOOGLE_CLOUD_PROJECT', 'GCLOUD_PROJECT', 'PUBSUB_PROJECT_ID', 'PUBSUB_EMULATOR_HOST'];

describe('Pub/Sub client preparation', () => {
  const saved = new Map<string, string | undefined>();
  beforeEach(() => {
    for (const name of [...PROJECT_ENV, 'METADATA_SERVER_DETECTION']) saved.set(name, process.env[name]);
    for (const name of PROJECT_ENV) delete process.env[name];
    // Stay on loopback: no metadata server lookup.
    process.env.METADATA_SERVER_DETECTION = 'none';
  });
  afterEach(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('refuses an emulator endpoint without a project id with CONFIG_INVALID, before any call', async () => {
    // Nothing listens on port 9: a call would fail differently (UNAVAILABLE), so the refusal comes first.
    const client = createPubSubClient({ apiEndpoint: '127.0.0.1:9' });
    assert.equal(client.isEmulator, true);
    await assert.rejects(
      loadCredentials(client),
      (err: unknown) =>
        err instanceof PullSecretError &&
        err.code === 'CONFIG_INVALID' &&
        /no project id/.test(err.message) &&
        /GOOGLE_CLOUD_PROJECT/.test(err.message),
    );
    await client.close();
  });

  it('accepts an emulator endpoint with a project id', async () => {
    const client = createPubSubClient({ apiEndpoint: '127.0.0.1:9', projectId: 'pull-secret-test' });
    await loadCredentials(client);
    assert.equal(client.projectId, 'pull-secret-test');
    await client.close();
  });
});
