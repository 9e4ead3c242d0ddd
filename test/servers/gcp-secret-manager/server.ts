import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { CallCounter, type CallRecord } from './calls.js';
import { FaultInjector, type Fault, type FaultSpec } from './faults.js';
import { buildMethods, type MethodSpec } from './handlers.js';
import { NotificationPublisher } from './notifications.js';
import { projectNumberOf } from './names.js';
import { MAX_PAGE_SIZE } from './paging.js';
import { QuotaEnforcer, statusDetails, type QuotaSettings } from './quotas.js';
import { secretManagerServiceDefinition } from './service-definition.js';
import { SecretManagerState } from './state.js';
import { METHOD_NAMES, RpcError, type MethodName } from './types.js';

/** Options of `startSecretManagerTestServer`. */
export interface SecretManagerTestServerOptions {
  /** Project the seeding helpers use (default `test-project`). Requests may name any project. */
  project?: string;
  /** Page size when a list asks for 0 entries ("server decides"); default 25000 like the service. */
  defaultPageSize?: number;
  /** Largest page returned whatever the request asks (default 25000); small values exercise paging. */
  maxPageSize?: number;
  /**
   * Enforce the per-project request quotas (reads, writes, accesses) over a sliding window, answering
   * RESOURCE_EXHAUSTED like the service; `{}` for the service's figures per minute. Off by default.
   */
  quotas?: QuotaSettings;
  /**
   * Publish Secret Manager's event notifications for secrets with `topics` to the Pub/Sub emulator
   * at `pubsubHost` (`127.0.0.1:PORT`), as the service does (notifications.ts). Off by default.
   */
  notifications?: { pubsubHost: string };
}

/** A running Secret Manager test server on 127.0.0.1. */
export interface SecretManagerTestServer {
  /** The random port it listens on. */
  readonly port: number;
  /** `127.0.0.1:PORT`, e.g. for `SECRET_MANAGER_ENDPOINT`. */
  readonly address: string;
  /** Default project of the seeding helpers (an id). */
  readonly project: string;
  /** Its project number, which every name in answers carries (names.ts). */
  readonly projectNumber: string;
  /** The in-memory model: seed (`seedSecret`, `setState`) and inspect (`findSecret`, `listVersions`). */
  readonly state: SecretManagerState;
  /** Live call counts by method, e.g. `calls.AddSecretVersion`. */
  readonly calls: Readonly<Record<MethodName, number>>;
  /** Calls made since start or the last `resetCalls`. */
  readonly totalCalls: number;
  /** Every call in order with its answer's status (never payloads). */
  readonly callLog: readonly CallRecord[];
  /** The quotas when enabled: limits, window, and admitted and refused calls by quota (refused ones are in `calls` and `callLog` too, as RESOURCE_EXHAUSTED). */
  readonly quotas: QuotaEnforcer | undefined;
  /** Zeroes the counts (quota counts included) and the log. */
  resetCalls(): void;
  /** Queues a fault (see `FaultSpec`). */
  injectFault(spec: FaultSpec): void;
  /** Drops faults not used up yet. */
  clearFaults(): void;
  /** Faults not used up yet. */
  readonly pendingFaults: number;
  /**
   * Restricts the caller's IAM permissions: calls needing another permission fail with
   * PERMISSION_DENIED, and TestIamPermissions grants only these. `undefined` grants everything.
   */
  setGrantedPermissions(permissions: readonly string[] | undefined): void;
  /** The notification publisher when `notifications` is set: what it published, `flush()`. */
  readonly notifications: NotificationPublisher | undefined;
  /** Sends the `SECRET_ROTATE` notification of a secret now (as the service does at its next rotation time). */
  rotate(secretId: string, project?: string): void;
  /** Stops the server (graceful, then forced after a second). Safe to call twice. */
  stop(): Promise<void>;
}

function statusName(code: grpc.status): string {
  return grpc.status[code] ?? 'UNKNOWN';
}

/**
 * Starts a protocol-faithful GCP Secret Manager v1 gRPC server on 127.0.0.1 with a random port and
 * plaintext transport. Reach it with the official SDK through
 * `{ apiEndpoint: '127.0.0.1', port, sslCreds: grpc.credentials.createInsecure() }`.
 */
export async function startSecretManagerTestServer(
  options: SecretManagerTestServerOptions = {},
): Promise<SecretManagerTestServer> {
  const project = options.project ?? 'test-project';
  const state = new SecretManagerState(project);
  const counter = new CallCounter();
  const faults = new FaultInjector();
  let granted: ReadonlySet<string> | undefined;
  const quotas = options.quotas === undefined ? undefined : new QuotaEnforcer(options.quotas);
  const methods = buildMethods(state, {
    defaultPageSize: options.defaultPageSize ?? MAX_PAGE_SIZE,
    maxPageSize: options.maxPageSize ?? MAX_PAGE_SIZE,
    grantedPermissions: () => granted,
  });

  const notifications =
    options.notifications === undefined
      ? undefined
      : new NotificationPublisher(options.notifications.pubsubHost, project);
  const prepare = (method: MethodName, request: Record<string, unknown>) =>
    notifications?.before(method, request, state);
  const server = new grpc.Server();
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const method of METHOD_NAMES) {
    implementation[method] = unaryHandler(
      method,
      methods[method],
      counter,
      faults,
      () => granted,
      quotas,
      prepare,
    );
  }
  server.addService(secretManagerServiceDefinition(), implementation);

  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, boundPort) =>
      err ? reject(err) : resolve(boundPort),
    );
  });

  let stopped: Promise<void> | undefined;
  return {
    port,
    address: `127.0.0.1:${port}`,
    project,
    projectNumber: projectNumberOf(project),
    state,
    calls: counter.calls,
    get totalCalls() {
      return counter.total;
    },
    callLog: counter.log,
    quotas,
    resetCalls: () => {
      counter.reset();
      quotas?.resetCounts();
    },
    injectFault: (spec) => faults.inject(spec),
    clearFaults: () => faults.clear(),
    get pendingFaults() {
      return faults.pending;
    },
    setGrantedPermissions: (permissions) => {
      granted = permissions === undefined ? undefined : new Set(permissions);
    },
    notifications,
    rotate: (secretId, inProject) => {
      const secret = state.findSecret(secretId, inProject);
      if (secret !== undefined) notifications?.rotate(secret);
    },
    stop: () => {
      stopped ??= new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 1000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }).then(() => notifications?.close());
      return stopped;
    },
  };
}

/** Wraps a handler with counting, permission checks and faults, and answers with real statuses. */
function unaryHandler(
  method: MethodName,
  spec: MethodSpec,
  counter: CallCounter,
  faults: FaultInjector,
  granted: () => ReadonlySet<string> | undefined,
  quotas: QuotaEnforcer | undefined,
  prepare: (
    method: MethodName,
    request: Record<string, unknown>,
  ) => ((response: unknown) => void) | undefined = () => undefined,
): grpc.handleUnaryCall<Record<string, unknown>, unknown> {
  return (call, callback) => {
    counter.arrive(method);
    const request = call.request;
    const entry: CallRecord = {
      method,
      resource: spec.resource(request),
      code: 'OK',
      authorization: call.metadata.get('authorization').length > 0,
    };
    const fail = (code: grpc.status, message: string, metadata?: grpc.Metadata): void => {
      entry.code = statusName(code);
      counter.record(entry);
      callback({ code, details: message, ...(metadata ? { metadata } : {}) });
    };
    // The quota is checked first: a refused call goes no further (and uses up no quota).
    const refusal = quotas?.admit(method, entry.resource);
    if (refusal !== undefined) {
      const trailer = new grpc.Metadata();
      trailer.set('grpc-status-details-bin', statusDetails(grpc.status.RESOURCE_EXHAUSTED, refusal));
      return fail(grpc.status.RESOURCE_EXHAUSTED, refusal.message, trailer);
    }
    const answer = (fault: Fault | undefined): void => {
      if (call.cancelled) {
        entry.code = 'CANCELLED';
        counter.record(entry);
        return;
      }
      if (fault?.code !== undefined && !fault.afterApply) return fail(fault.code, fault.message);
      let response: unknown;
      try {
        const permissions = granted();
        if (spec.permission !== undefined && permissions !== undefined && !permissions.has(spec.permission)) {
          throw new RpcError(
            grpc.status.PERMISSION_DENIED,
            `Permission '${spec.permission}' denied for resource '${entry.resource}' (or it may not exist).`,
          );
        }
        const notify = prepare(method, request);
        response = spec.run(request);
        notify?.(response);
      } catch (err) {
        if (err instanceof RpcError) return fail(err.code, err.message);
        return fail(grpc.status.INTERNAL, 'Internal error encountered.');
      }
      if (fault?.code !== undefined) return fail(fault.code, fault.message);
      counter.record(entry);
      callback(null, response);
    };
    const fault = faults.take(method);
    if (fault === undefined || fault.delayMs === 0) return answer(fault);
    void sleep(fault.delayMs, undefined, { ref: false }).then(() => answer(fault));
  };
}
