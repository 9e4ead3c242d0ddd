import { PubSub, type ClientConfig } from '@google-cloud/pubsub';
import { PullSecretError } from '../../errors/index.js';

/**
 * A Pub/Sub client for a project (default: what the client library finds) and an endpoint (`host:port`
 * of the API or an emulator; wins over PUBSUB_EMULATOR_HOST), its generated clients sharing its auth.
 */
export function createPubSubClient(options: {
  projectId?: string | undefined;
  apiEndpoint?: string | undefined;
}): PubSub {
  const config: ClientConfig = {};
  if (options.projectId !== undefined) config.projectId = options.projectId;
  if (options.apiEndpoint !== undefined) config.apiEndpoint = options.apiEndpoint;
  return shareAuth(new PubSub(config));
}

/**
 * Makes the generated Pub/Sub clients share the client's GoogleAuth (they build their own unless
 * given one), so the credential `loadCredentials` checked is the one their stubs use.
 */
function shareAuth(client: PubSub): PubSub {
  client.options.auth ??= client.auth;
  return client;
}

/**
 * Loads the Google credentials and settles the project id before the first call (the emulator
 * needs no credential, but a project id all the same). Without this, a missing credential or
 * project surfaces inside google-gax's stub creation, and the generated Pub/Sub clients re-throw it
 * from a promise nobody handles (`initialize().catch(err => { throw err; })` in every method),
 * which ends the process. Once loaded, the shared GoogleAuth hands the cached credential to every
 * stub.
 * @throws PullSecretError CONFIG_INVALID when no usable credential or no project id is found.
 */
export async function loadCredentials(client: PubSub): Promise<void> {
  if (!client.isEmulator) {
    try {
      await client.auth.getClient();
    } catch (err) {
      throw new PullSecretError(
        'CONFIG_INVALID',
        'Pub/Sub: no usable Google credentials. On GKE bind the Kubernetes service account to a Google ' +
          'service account with Workload Identity; locally run `gcloud auth application-default login`; ' +
          'for the emulator set apiEndpoint or PUBSUB_EMULATOR_HOST',
        { cause: err },
      );
    }
  }
  // The library answers the emulator's missing project with '' rather than an error.
  const projectId = await client.getClientConfig().then(
    (config) => config.projectId,
    () => undefined,
  );
  if (projectId === undefined || projectId === '')
    throw new PullSecretError(
      'CONFIG_INVALID',
      'Pub/Sub: no project id. Set the projectId setting (broker.projectId, BROKER_GOOGLEPUBSUB_PROJECT_ID; ' +
        'notifications.projectId) or GOOGLE_CLOUD_PROJECT; the emulator needs one too',
    );
}
