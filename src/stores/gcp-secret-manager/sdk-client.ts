// The v1 client's own module, not the package index: the index also loads the v1beta2 client and the
// generated static protos (protos.js, 1.1 MB of source the client never uses: it builds its stub from
// protos.json), which cost every process that opens the store about 40 ms and 2 MB. Same class, same
// official client; the package has no "exports" map, so this path is public as far as Node is concerned.
import { SecretManagerServiceClient } from '@google-cloud/secret-manager/build/src/v1/secret_manager_service_client.js';
import { grpc } from 'google-gax';
import { PullSecretError } from '../../errors/index.js';
import { parseEndpoint, type GcpStoreConfig } from './config.js';
import { isLoopbackHost } from '../../util/loopback.js';

type ClientOptions = NonNullable<ConstructorParameters<typeof SecretManagerServiceClient>[0]>;

/**
 * The SDK client with two fixes for a gRPC stub that could not be built (typically no usable Google
 * credentials: google-gax's `createStub` awaits google-auth-library's `getClient()`, which rejects).
 *
 * - Every generated method runs `this.initialize().catch((err) => { throw err; })` and drops the
 *   result: when the stub promise rejects, each call leaves one more rejected promise that nobody
 *   handles, and Node ends the process. The call itself already fails with that error (gax routes
 *   the stub failure to the call), so `initialize` here resolves instead of rejecting.
 * - `close()` chains on the stub promise without a catch, so it rejected with the raw auth error
 *   and hid the classified one; with no stub there is no channel to close.
 */
class SecretManagerClient extends SecretManagerServiceClient {
  private stubFailed = false;

  override initialize(): ReturnType<SecretManagerServiceClient['initialize']> {
    return super.initialize().catch(() => {
      this.stubFailed = true;
      return {};
    });
  }

  override async close(): Promise<void> {
    if (this.stubFailed) return;
    await super.close();
  }
}

/**
 * Builds the official SDK client. Makes no network call: gax connects and looks up credentials on
 * the first RPC.
 *
 * - Default: the public endpoint with Application Default Credentials (Workload Identity on GKE).
 * - `endpoint`: the same, against another host (a private endpoint), still over TLS with ADC.
 * - `insecure` (loopback endpoint only): plaintext gRPC with no credentials at all. gax uses
 *   `sslCreds` as the channel credentials as they are, so no token is fetched; `universeDomain` is
 *   set because gax otherwise asks google-auth-library for it, which loads ADC and may probe the
 *   GCE metadata server before the first call.
 *
 * `grpc` comes from google-gax's re-export so the credentials object belongs to the very
 * `@grpc/grpc-js` instance gax builds its channel with.
 *
 * @throws CONFIG_INVALID when `insecure` is set without a loopback endpoint (defence in depth:
 *   the config schema already refuses it).
 */
export function createSdkClient(config: GcpStoreConfig): SecretManagerServiceClient {
  const endpoint = config.endpoint === undefined ? undefined : parseEndpoint(config.endpoint);
  if (config.endpoint !== undefined && endpoint === undefined) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      'invalid environment variable SECRET_MANAGER_ENDPOINT: must be host:port',
    );
  }
  // Hostnames are plain; an IPv6 literal keeps its brackets, as gax joins `${host}:${port}`.
  const options: ClientOptions = {
    ...RECONNECT_BACKOFF,
    ...(endpoint === undefined ? {} : { apiEndpoint: endpoint.host, port: endpoint.port }),
  };
  if (config.insecure) {
    if (endpoint === undefined || !isLoopbackHost(endpoint.host)) {
      throw new PullSecretError(
        'CONFIG_INVALID',
        'invalid environment variable SECRET_MANAGER_INSECURE: plaintext gRPC is only allowed together ' +
          'with SECRET_MANAGER_ENDPOINT on a loopback host',
      );
    }
    options.sslCreds = grpc.credentials.createInsecure();
    options.universeDomain = 'googleapis.com';
  }
  return new SecretManagerClient(options);
}

/**
 * The channel's reconnect backoff after the service was unreachable: grpc-js grows it to 120 s by
 * default, so calls kept failing long after an outage ended; bounded, a call recovers within seconds.
 * gax passes `grpc.*` client options to the channel
 * (https://github.com/googleapis/gax-nodejs/blob/main/gax/src/grpc.ts,
 * `createStub`); the names are grpc-js channel options
 * (https://github.com/grpc/grpc-node/blob/master/packages/grpc-js/src/channel-options.ts).
 */
const RECONNECT_BACKOFF = {
  'grpc.initial_reconnect_backoff_ms': 1000,
  'grpc.max_reconnect_backoff_ms': 5000,
} as const;

/**
 * Builds one client and drops it, so the SDK's service definitions (protos.json, about 50 ms of
 * CPU to load) are in google-gax's process-wide cache before the first real client is made: the
 * first events after a start, and the first cluster of each new project, do not pay for them.
 * Makes no network call and looks up no credentials (plaintext, fixed universe, never initialized).
 */
export function warmSdkClient(): void {
  void new SecretManagerServiceClient({
    sslCreds: grpc.credentials.createInsecure(),
    universeDomain: 'googleapis.com',
    apiEndpoint: 'localhost',
  });
}
