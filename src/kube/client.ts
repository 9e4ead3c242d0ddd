import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import {
  BatchV1Api,
  CoreV1Api,
  createConfiguration,
  KubeConfig,
  Observable,
  ServerConfiguration,
  type ApiConstructor,
  type ApiType,
  type ConfigurationOptions,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import { KubeConnectionPool } from './connection-pool.js';
import { PullSecretError } from '../errors/index.js';
import { quoteIdentifier } from '../pullsecret/identifiers.js';

/** Where the Kubernetes connection settings came from (`default`: `~/.kube/config`). */
type KubeConfigSource = 'explicit' | 'KUBECONFIG' | 'in-cluster' | 'default';

/**
 * Said when no connection is configured: the client library would otherwise talk to
 * `http://localhost:8080`, and the first call would fail with a message that explains nothing.
 */
const NO_KUBECONFIG_MESSAGE =
  'no Kubernetes API connection configured: set KUBECONFIG (or kubernetes.kubeconfig in the adapter ' +
  'config), run in a pod with a service account, or write manifest files instead ' +
  '(KUBERNETES_TARGET=manifests, or kubernetes.target: manifests)';

export interface LoadKubeConfigOptions {
  /** An explicit kubeconfig file (CLI flag or config); wins over everything else. */
  kubeconfigPath?: string;
  /** Environment to read `KUBECONFIG`, `HOME` and `KUBERNETES_SERVICE_HOST/PORT` from; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Service account directory; default `/var/run/secrets/kubernetes.io/serviceaccount`. */
  serviceAccountDir?: string;
}

export interface LoadedKubeConfig {
  kubeConfig: KubeConfig;
  source: KubeConfigSource;
  /** API server URL of the current context. */
  server: string;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

function fromFiles(kc: KubeConfig, files: string[]): void {
  const [first, ...rest] = files;
  kc.loadFromFile(first ?? '');
  // Same merge as kubectl and the client's loadFromDefault: the first file's current context wins.
  for (const file of rest) {
    const extra = new KubeConfig();
    extra.loadFromFile(file);
    kc.mergeConfig(extra, true);
  }
}

function fromServiceAccount(kc: KubeConfig, env: NodeJS.ProcessEnv, dir: string): void {
  const host = env.KUBERNETES_SERVICE_HOST ?? '';
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${env.KUBERNETES_SERVICE_PORT ?? ''}`;
  kc.loadFromOptions({
    clusters: [{ name: 'in-cluster', server, caFile: join(dir, 'ca.crt'), skipTLSVerify: false }],
    // A token file provider, not the token itself: projected service account tokens rotate, and
    // the client re-reads the file.
    users: [
      { name: 'in-cluster', authProvider: { name: 'tokenFile', config: { tokenFile: join(dir, 'token') } } },
    ],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster' }],
    currentContext: 'in-cluster',
  });
}

/**
 * Builds a KubeConfig, taking the first that applies:
 * 1. `kubeconfigPath` (explicit file);
 * 2. `KUBECONFIG` (one or more files separated by the platform delimiter, merged like kubectl);
 * 3. in-cluster service account (`KUBERNETES_SERVICE_HOST`/`_PORT` set and a token file present);
 * 4. `~/.kube/config`.
 * Without any of them it refuses (the client's own last resort, `http://localhost:8080`, is never
 * what a deployment means).
 *
 * Makes no network call.
 * @throws PullSecretError CONFIG_INVALID when no connection is configured (naming KUBECONFIG and
 *   the manifests target), or a kubeconfig cannot be read or parsed, or names no current cluster.
 */
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): LoadedKubeConfig {
  const env = options.env ?? process.env;
  const saDir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const kc = new KubeConfig();
  let source: KubeConfigSource;
  const kubeconfigEnv = (env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== '');
  const homeConfig = join(env.HOME ?? homedir(), '.kube', 'config');
  const inCluster = Boolean(
    env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT && existsSync(join(saDir, 'token')),
  );
  if (!options.kubeconfigPath && kubeconfigEnv.length === 0 && !inCluster && !existsSync(homeConfig)) {
    throw new PullSecretError('CONFIG_INVALID', NO_KUBECONFIG_MESSAGE);
  }
  const files = options.kubeconfigPath
    ? [options.kubeconfigPath]
    : kubeconfigEnv.length > 0
      ? kubeconfigEnv
      : inCluster
        ? []
        : [homeConfig];
  try {
    if (options.kubeconfigPath) {
      source = 'explicit';
      fromFiles(kc, files);
    } else if (kubeconfigEnv.length > 0) {
      source = 'KUBECONFIG';
      fromFiles(kc, files);
    } else if (inCluster) {
      source = 'in-cluster';
      fromServiceAccount(kc, env, saDir);
    } else {
      source = 'default';
      fromFiles(kc, files);
    }
  } catch (err) {
    const where = files.length > 0 ? ` ${files.map((f) => quoteIdentifier(f)).join(', ')}` : '';
    const code = (err as { code?: unknown }).code;
    throw new PullSecretError(
      'CONFIG_INVALID',
      `cannot load kubeconfig${where}${typeof code === 'string' ? `: ${code}` : ''}`,
      { cause: err },
    );
  }
  const cluster = kc.getCurrentCluster();
  if (cluster === null || !cluster.server) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `kubeconfig (${source}) has no current context with a cluster server`,
    );
  }
  return { kubeConfig: kc, source, server: cluster.server };
}

/** The API clients the service uses, built from one KubeConfig. */
export interface KubeApis {
  core: CoreV1Api;
  batch: BatchV1Api;
  server: string;
  source: KubeConfigSource;
}

/** Connections to the API servers, shared by every client this process makes. */
const CONNECTIONS = new KubeConnectionPool();

/**
 * Like `kubeConfig.makeApiClient(type)`, except that calls reuse kept-alive connections (see
 * KubeConnectionPool) instead of opening one per request.
 * @throws PullSecretError CONFIG_INVALID when the config has no current cluster.
 */
export function makeApiClient<T extends ApiType>(kubeConfig: KubeConfig, type: ApiConstructor<T>): T {
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null || !cluster.server)
    throw new PullSecretError('CONFIG_INVALID', 'kubeconfig has no current context with a cluster server');
  return new type(
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: kubeConfig },
      middleware: [CONNECTIONS.middleware],
    }),
  );
}

/** Loads the config (see `loadKubeConfig`) and builds the API clients. Makes no network call. */
export function createKubeApis(options: LoadKubeConfigOptions = {}): KubeApis {
  const { kubeConfig, source, server } = loadKubeConfig(options);
  return {
    core: makeApiClient(kubeConfig, CoreV1Api),
    batch: makeApiClient(kubeConfig, BatchV1Api),
    server,
    source,
  };
}

/**
 * Per-call options that tie a request to an AbortSignal: the generated client has no signal
 * parameter, but its middleware can set one on the request it is about to send.
 */
export function withSignal(signal: AbortSignal | undefined): ConfigurationOptions | undefined {
  if (signal === undefined) return undefined;
  const middleware: ObservableMiddleware = {
    pre: (ctx: RequestContext) => {
      ctx.setSignal(signal);
      return new Observable(Promise.resolve(ctx));
    },
    post: (ctx: ResponseContext) => new Observable(Promise.resolve(ctx)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}
