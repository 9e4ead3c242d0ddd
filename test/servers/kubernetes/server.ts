import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN, bootstrapPolicy, serviceAccountIdentity, type Identity } from './authorizer.js';
import { CallLog, FaultInjector, type FaultSpec, type RequestRecord } from './faults.js';
import { handleRequest, type HandlerContext } from './http-handler.js';
import { JobRunner, type JobRun, type RunJobsOptions } from './job-runner.js';
import { writeKubeconfig } from './kubeconfig.js';
import { deployRbac } from './kustomize.js';
import { ApiOperations } from './operations.js';
import { ObjectStore } from './store.js';
import type { OpenWatch } from './watch.js';
import { generateTestPki } from './tls.js';
import { RESOURCE_TYPES, resourceByKind, type KubeObject, type ResourceType } from './types.js';

export type { FaultSpec, RequestRecord } from './faults.js';
export type { JobRun, RunJobsOptions } from './job-runner.js';
export type { KubeObject } from './types.js';

export interface KubernetesTestServerOptions {
  /** Bearer token of the server's kubeconfig (an administrator: group `system:masters`); random by default. */
  token?: string;
  /**
   * Kustomizations under the repository's `deploy/` (e.g. `overlays/job`) whose ServiceAccounts and
   * RBAC objects are loaded at start, so clients given `serviceAccountKubeconfig` act with exactly
   * the grants the deployment ships. With it, Jobs' pods act as their service account; without it,
   * as the administrator.
   */
  rbac?: string[];
  /** Namespaces that exist from the start (besides `default`). */
  namespaces?: string[];
  /** How often watches that allow bookmarks get one; default a minute, as the API server. */
  bookmarkIntervalMs?: number;
  /** Run created Jobs as child processes (see JobRunner); without it Jobs are stored, not run. */
  runJobs?: RunJobsOptions;
}

function resourceType(resource: string): ResourceType {
  const rt = RESOURCE_TYPES.find((r) => r.resource === resource);
  if (rt === undefined) throw new Error(`the test server does not serve ${resource}`);
  return rt;
}

/**
 * A Kubernetes API server for tests: HTTPS on 127.0.0.1 with a throwaway CA, bearer-token auth, and
 * a kubeconfig file the real `@kubernetes/client-node` and kubectl can load. Serves namespaces,
 * Secrets and Jobs with the real API's semantics and Status errors; Jobs are stored, and run as
 * child processes when `runJobs` is given.
 * Tests can inject faults, count calls, and read or change state directly.
 */
export class KubernetesTestServer {
  private readonly faults = new FaultInjector();
  private readonly callLog = new CallLog();
  private readonly store = new ObjectStore();
  private readonly ops = new ApiOperations(this.store);
  private readonly watches = new Set<OpenWatch>();
  private readonly identities = new Map<string, Identity>();
  /** Terminating namespaces kept until released (`holdNamespaceTermination`); undefined: none held. */
  private heldNamespaces: Set<string> | undefined;
  private jobRunner: JobRunner | undefined;
  private tlsConnections = 0;

  private constructor(
    private readonly server: Server,
    /** `https://127.0.0.1:{port}`. */
    readonly url: string,
    /** Path of a kubeconfig pointing at this server (CA data + token). */
    readonly kubeconfigPath: string,
    readonly token: string,
    /** PEM of the CA that signed the server certificate. */
    readonly caPem: string,
    /** Temp directory holding the PKI and kubeconfig; removed by `close`. */
    readonly dir: string,
  ) {
    server.on('secureConnection', () => this.tlsConnections++);
  }

  /** TLS connections accepted so far (each one a handshake), to check that clients reuse them. */
  connections(): number {
    return this.tlsConnections;
  }

  /** Starts a server on a random loopback port. @throws when openssl is missing or the port cannot be bound. */
  static async start(options: KubernetesTestServerOptions = {}): Promise<KubernetesTestServer> {
    const dir = await mkdtemp(join(tmpdir(), 'kube-test-server-'));
    try {
      const pki = await generateTestPki(dir);
      const token = options.token ?? randomBytes(16).toString('hex');
      // The handler needs the instance, which needs the listening server: filled in below.
      const holder: { ctx?: HandlerContext } = {};
      const server = createServer({ key: pki.keyPem, cert: pki.certPem }, (req, res) => {
        if (holder.ctx !== undefined) void handleRequest(holder.ctx, req, res);
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      const { port } = server.address() as AddressInfo;
      const url = `https://127.0.0.1:${port}`;
      const kubeconfigPath = await writeKubeconfig({ dir, server: url, caPem: pki.caPem, token });
      const instance = new KubernetesTestServer(server, url, kubeconfigPath, token, pki.caPem, dir);
      instance.identities.set(token, ADMIN);
      instance.ops.onNamespaceTerminating = (name) => {
        if (instance.heldNamespaces !== undefined) instance.heldNamespaces.add(name);
        // The namespace controller finishes soon after, not within the DELETE call.
        else setImmediate(() => instance.ops.finalizeNamespace(name));
      };
      holder.ctx = {
        ops: instance.ops,
        store: instance.store,
        faults: instance.faults,
        calls: instance.callLog,
        identities: instance.identities,
        address: `127.0.0.1:${port}`,
        watches: instance.watches,
        bookmarkIntervalMs: options.bookmarkIntervalMs,
      };
      for (const ns of ['default', ...(options.namespaces ?? [])]) instance.createNamespace(ns);
      for (const obj of bootstrapPolicy()) instance.seed(obj);
      for (const overlay of options.rbac ?? []) for (const obj of deployRbac(overlay)) instance.apply(obj);
      if (options.runJobs !== undefined) {
        // With the deployment's RBAC loaded, a pod acts as its Job's service account, as on a cluster.
        const podKubeconfig =
          options.rbac === undefined
            ? async () => kubeconfigPath
            : (ns: string, sa: string) => instance.serviceAccountKubeconfig(ns, sa);
        instance.jobRunner = new JobRunner(instance.ops, join(dir, 'jobs'), podKubeconfig, options.runJobs);
        instance.jobRunner.start();
      }
      return instance;
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /**
   * A kubeconfig whose token authenticates as the service account `namespace/name` (user
   * `system:serviceaccount:{namespace}:{name}` and its groups), allowed only what RBAC grants it.
   */
  async serviceAccountKubeconfig(namespace: string, name: string): Promise<string> {
    return this.kubeconfigFor(serviceAccountIdentity(namespace, name), `kubeconfig-sa-${namespace}-${name}`);
  }

  /** A kubeconfig with a new token that authenticates as `identity`. */
  async kubeconfigFor(
    identity: Identity,
    file = `kubeconfig-${randomBytes(4).toString('hex')}`,
  ): Promise<string> {
    const existing = [...this.identities].find(
      ([, id]) => id.user === identity.user && id.groups.join() === identity.groups.join(),
    );
    const token = existing?.[0] ?? randomBytes(16).toString('hex');
    this.identities.set(token, identity);
    return writeKubeconfig({ dir: this.dir, server: this.url, caPem: this.caPem, token, file });
  }

  /**
   * Keeps namespaces deleted from now on `Terminating` (creates in them are refused with 403) until
   * the returned function is called, which lets the namespace controller finish them.
   */
  holdNamespaceTermination(): () => void {
    const held = (this.heldNamespaces ??= new Set());
    return () => {
      this.heldNamespaces = undefined;
      for (const name of held) this.ops.finalizeNamespace(name);
    };
  }

  /** Requests answered 403 Forbidden, oldest first: calls the caller's RBAC does not allow. */
  forbidden(): RequestRecord[] {
    return this.callLog.all().filter((r) => r.status === 403);
  }

  /** Creates the object, or replaces the stored one of that name (as `kubectl apply` of a manifest). */
  apply(object: KubeObject): KubeObject {
    const rt = resourceByKind(object.apiVersion, object.kind);
    if (rt === undefined)
      throw new Error(`the test server does not serve ${object.apiVersion} ${object.kind}`);
    const namespace = rt.namespaced ? (object.metadata.namespace ?? 'default') : undefined;
    if (this.store.get(rt, namespace, object.metadata.name ?? '') === undefined) return this.seed(object);
    return this.ops.replace(rt, namespace, object.metadata.name ?? '', object);
  }

  /** Injects a fault; the returned function removes just this one. Faults apply after authorization, in the order added. */
  injectFault(spec: FaultSpec): () => void {
    return this.faults.add(spec);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  /** Requests received (faulted ones included) by verb (`GET`, `WATCH`, `POST`, …) and plural resource. */
  calls(method?: string, resource?: string): number {
    return this.callLog.count(method, resource);
  }

  /** POST + PUT + PATCH + DELETE requests, optionally for one resource. */
  writes(resource?: string): number {
    return this.callLog.writes(resource);
  }

  /** Every resource request received, oldest first (discovery is not recorded). */
  requests(): readonly RequestRecord[] {
    return this.callLog.all();
  }

  resetCalls(): void {
    this.callLog.reset();
  }

  /** Creates a namespace (no-op when it exists) and returns it. */
  createNamespace(name: string, labels: Record<string, string> = {}): KubeObject {
    const rt = resourceType('namespaces');
    return (
      this.store.get(rt, undefined, name) ?? this.ops.create(rt, undefined, { metadata: { name, labels } })
    );
  }

  /**
   * Stores an object as if a client had created it (same defaults and validation), creating its
   * namespace when missing. @throws StatusError like a create would.
   */
  seed(object: KubeObject): KubeObject {
    const rt = resourceByKind(object.apiVersion, object.kind);
    if (rt === undefined)
      throw new Error(`the test server does not serve ${object.apiVersion} ${object.kind}`);
    const namespace = rt.namespaced ? (object.metadata.namespace ?? 'default') : undefined;
    if (namespace !== undefined) this.createNamespace(namespace);
    return this.ops.create(rt, namespace, object);
  }

  /** The stored object (a copy), or undefined. `namespace` is ignored for cluster-scoped resources. */
  getObject(resource: string, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.store.get(resourceType(resource), namespace, name);
  }

  listObjects(resource: string, namespace?: string): KubeObject[] {
    return this.store.list(resourceType(resource), namespace);
  }

  /** Deletes an object behind the clients' backs (emits a DELETED watch event). */
  deleteObject(resource: string, namespace: string | undefined, name: string): boolean {
    const rt = resourceType(resource);
    if (this.store.get(rt, namespace, name) === undefined) return false;
    this.ops.delete(rt, namespace, name, {});
    return true;
  }

  /**
   * Merges `status` into a Job's status, as the Job controller would (a MODIFIED watch event).
   * @throws StatusError 404 when the Job does not exist.
   */
  setJobStatus(namespace: string, name: string, status: Record<string, unknown>): KubeObject {
    return this.ops.mergeStatus(resourceType('jobs'), namespace, name, status);
  }

  /** Finished pod runs of Jobs (with `runJobs`), oldest first, output included for leak checks. */
  jobRuns(): readonly JobRun[] {
    return this.jobRunner?.runs() ?? [];
  }

  /** Ends every open watch stream cleanly, as the API server does at a watch's timeout. */
  endWatches(): void {
    for (const watch of [...this.watches]) watch.end();
  }

  /** Sends a BOOKMARK (the current resourceVersion) now on every open watch that allows bookmarks. */
  sendBookmarks(): void {
    for (const watch of this.watches) watch.bookmark();
  }

  /**
   * Compacts the event history (etcd compaction): a client watching again from a version before now
   * gets an ERROR event with 410 Gone (Expired) and must list again.
   */
  compact(): void {
    this.store.compact();
  }

  /**
   * Stops listening and drops every connection (watches included, cut mid-stream rather than ended
   * cleanly, as a crashed or killed server leaves them), waits `downMs`, then listens again on the
   * same port with the same state: an API server restart as clients see it. `whileDown` runs while
   * nothing is served (e.g. to change objects no watch reports).
   */
  async restart(options: { downMs?: number; whileDown?: () => void } = {}): Promise<void> {
    const port = Number(new URL(this.url).port);
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
    options.whileDown?.();
    await new Promise((r) => setTimeout(r, options.downMs ?? 0));
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /** Ends watches, closes connections and removes the temp directory. Safe to call twice. */
  async close(): Promise<void> {
    await this.jobRunner?.stop();
    for (const watch of [...this.watches]) watch.end();
    if (this.server.listening) {
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      this.server.closeAllConnections();
      await closed;
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** Starts a KubernetesTestServer; see `KubernetesTestServer.start`. */
export function startKubernetesTestServer(
  options: KubernetesTestServerOptions = {},
): Promise<KubernetesTestServer> {
  return KubernetesTestServer.start(options);
}
