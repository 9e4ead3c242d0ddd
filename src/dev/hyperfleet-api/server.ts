import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { API_BASE_PATH } from '../../hyperfleet/base-url.js';
import type { AdapterStatus, AdapterStatusCreateRequest, Cluster } from '../../hyperfleet/types.js';
import { CallLog, type CallRecord } from './calls.js';
import { loadContract } from './contract.js';
import { FaultInjector, type FaultSpec } from './faults.js';
import { dispatch } from './handlers.js';
import { checkBearer, writeAnswer, type Answer } from './http-io.js';
import { loadSnapshot, SnapshotWriter } from './persistence.js';
import { kindForStatus, problemBody, ProblemError } from './problem.js';
import { matchRoute, type RouteName } from './routes.js';
import { ClusterStore, type PutStatusResult } from './store.js';
import { OBSERVED_TIME_LIMITS } from './status-rules.js';

export interface HyperFleetApiStandInOptions {
  /** Loopback only: `127.0.0.1` (default), `::1` or `localhost`. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Adapters that decide `Reconciled` and the removal of deleted clusters (default `['pullsecret']`). */
  requiredAdapters?: string[];
  /** Accepted bearer tokens; unset: no authentication. Change later with `setTokens`. */
  tokens?: string[];
  /** State file: loaded at start, saved atomically after every change. Unset: memory only. */
  dataFile?: string;
  /** The server clock (for time-window rules and timestamps); default the real one. */
  now?: () => Date;
  /** How far `observed_time` may be ahead of the server clock (default 5 min, as hyperfleet-api). */
  maxClockSkewMs?: number;
  /** How old `observed_time` may be (default 30 min, as hyperfleet-api). */
  maxObservedAgeMs?: number;
  /** Identity written to `created_by` / `updated_by` / `deleted_by` (default `dev@hyperfleet.local`). */
  identity?: string;
  /** Check every answer against the contract and collect `violations` (default true). */
  checkResponses?: boolean;
  /** Largest request body (default 1 MiB). */
  maxBodyBytes?: number;
  contractPath?: string;
  /** Sees every valid status report with what became of it (stored, or discarded with the reason): for tests. */
  onReport?: (clusterId: string, report: AdapterStatusCreateRequest, result: PutStatusResult) => void;
}

/** A running stand-in. */
export interface HyperFleetApiStandIn {
  /** `http://127.0.0.1:{port}` */
  readonly url: string;
  /** `url` + `/api/hyperfleet/v1` */
  readonly baseUrl: string;
  readonly port: number;
  /** Requests per route, counted on arrival (faulted ones too). */
  readonly calls: Readonly<Record<RouteName, number>>;
  readonly log: readonly CallRecord[];
  /** Answers that did not match the contract; tests assert it stays empty. */
  readonly violations: readonly string[];
  resetCalls(): void;
  /** Injects a fault; the returned function removes just this one. */
  injectFault(spec: FaultSpec): () => void;
  clearFaults(): void;
  setTokens(tokens: string[] | undefined): void;
  /** Read access to the state. */
  getCluster(id: string): Cluster | undefined;
  listStatuses(id: string): AdapterStatus[];
  /** Puts a fixture-like cluster in place (persisted). @throws Error for an invalid seed */
  seedCluster(seed: Partial<Cluster> & { spec: Record<string, unknown> }): Promise<Cluster>;
  /** Applies a status report with the same rules as `PUT /statuses` (persisted). @throws ProblemError */
  reportStatus(clusterId: string, report: AdapterStatusCreateRequest): Promise<PutStatusResult>;
  stop(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * Starts a HyperFleet API stand-in on loopback implementing the contract's cluster and cluster-status
 * operations with the API's rules (see `store.ts`, `status-rules.ts`, `conditions.ts`), RFC 9457
 * problem answers, optional bearer authentication, fault injection and call counts. It serves
 * `pull-secret dev` and is the API test server of the integration tests.
 *
 * @throws Error for a non-loopback host, an unreadable state file or a port in use
 */
export async function startHyperFleetApiStandIn(
  options: HyperFleetApiStandInOptions = {},
): Promise<HyperFleetApiStandIn> {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host))
    throw new Error(`the HyperFleet API stand-in listens on loopback only, not ${host}`);
  const contract = loadContract(options.contractPath);
  const now = options.now ?? (() => new Date());
  const store = new ClusterStore({
    contract,
    requiredAdapters: options.requiredAdapters ?? ['pullsecret'],
    identity: options.identity ?? 'dev@hyperfleet.local',
    limits: {
      maxClockSkewMs: options.maxClockSkewMs ?? OBSERVED_TIME_LIMITS.maxClockSkewMs,
      maxObservedAgeMs: options.maxObservedAgeMs ?? OBSERVED_TIME_LIMITS.maxObservedAgeMs,
    },
    now,
    onReport: options.onReport,
  });
  const writer =
    options.dataFile === undefined
      ? undefined
      : new SnapshotWriter(options.dataFile, () => store.serialize());
  if (options.dataFile !== undefined) {
    const snapshot = await loadSnapshot(options.dataFile, contract);
    if (snapshot !== undefined) store.restore(snapshot);
  }
  const persist = async (): Promise<void> => {
    try {
      await writer?.save();
    } catch (err) {
      throw new ProblemError(
        'database',
        `the stand-in could not save its state: ${(err as NodeJS.ErrnoException).code ?? 'write failed'}`,
      );
    }
  };
  const calls = new CallLog();
  const faults = new FaultInjector();
  const violations: string[] = [];
  let tokens = options.tokens;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;

  const problemAnswer = (error: ProblemError, path: string): Answer => {
    const body = problemBody(error.kind, error.detail, path, now(), error.errors);
    const challenge = error.kind === 'unauthenticated' || error.kind === 'invalidCredentials';
    return {
      status: body.status,
      body,
      contentType: 'application/problem+json',
      headers: challenge ? { ...error.headers, 'www-authenticate': 'Bearer' } : error.headers,
    };
  };

  const faultAnswer = (fault: FaultSpec, path: string): Answer => {
    const status = fault.status ?? 500;
    const headers = fault.retryAfter === undefined ? undefined : { 'retry-after': fault.retryAfter };
    if (fault.body !== undefined)
      return { status, raw: fault.body, contentType: fault.contentType ?? 'text/html', headers };
    const body = { ...problemBody(kindForStatus(status), 'injected fault', path, now()), status };
    return { status, body, contentType: 'application/problem+json', headers };
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const match = matchRoute(method, path);
    calls.arrive(match.route);
    const entry: CallRecord = {
      route: match.route,
      method,
      path,
      status: 0,
      authorization: req.headers.authorization !== undefined,
    };
    const fault = faults.take(match.route, match.clusterId);
    if (fault?.delayMs !== undefined) await sleep(fault.delayMs);
    if (fault?.hang === true || fault?.reset === true) {
      calls.record({ ...entry, fault: true });
      if (fault.reset === true) req.socket.destroy();
      return;
    }
    let answer: Answer;
    if (fault?.status !== undefined && fault.afterApply !== true) {
      req.resume();
      answer = faultAnswer(fault, path);
      entry.fault = true;
    } else {
      try {
        if (match.refusal?.kind !== 'routeNotFound') checkBearer(req, tokens);
        const result = await dispatch(match, req, { store, maxBodyBytes });
        if (result.changed) await persist();
        if (result.discarded !== undefined) entry.discarded = result.discarded;
        answer = result.answer;
      } catch (err) {
        // Drain whatever the handler did not read, so the connection stays usable.
        req.resume();
        answer = problemAnswer(
          err instanceof ProblemError ? err : new ProblemError('internal', 'Unspecified error'),
          path,
        );
      }
      if (fault?.status !== undefined) {
        answer = faultAnswer(fault, path);
        entry.fault = true;
      }
    }
    if (options.checkResponses !== false && answer.raw === undefined) {
      const found = contract.checkResponse(
        match.template,
        method,
        answer.status,
        answer.contentType ?? (answer.body === undefined ? undefined : 'application/json'),
        answer.body,
      );
      violations.push(...found.map((v) => `${method} ${path}: ${v}`));
    }
    writeAnswer(res, answer);
    calls.record({ ...entry, status: answer.status });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent)
        writeAnswer(res, problemAnswer(new ProblemError('internal', 'Unspecified error'), req.url ?? '/'));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url,
    baseUrl: `${url}${API_BASE_PATH}`,
    port,
    calls: calls.calls,
    log: calls.log,
    violations,
    resetCalls: () => calls.reset(),
    injectFault: (spec) => faults.inject(spec),
    clearFaults: () => faults.clear(),
    setTokens: (next) => {
      tokens = next;
    },
    getCluster: (id) => store.getCluster(id),
    listStatuses: (id) => store.allStatuses(id),
    async seedCluster(seed) {
      const cluster = store.seedCluster(seed);
      await persist();
      return cluster;
    },
    async reportStatus(clusterId, report) {
      const result = store.putStatus(clusterId, report);
      if (result.outcome === 'stored') await persist();
      return result;
    },
    async stop() {
      faults.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await writer?.flush();
    },
  };
}
