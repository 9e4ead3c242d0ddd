import type { IncomingMessage, ServerResponse } from 'node:http';
import { toPullSecretError } from '../errors/index.js';
import type { Logger } from '../observability/logger.js';
import { assertClusterId } from '../pullsecret/identifiers.js';
import type { AdminService } from './admin-service.js';
import { writeAudit, type AdminAction, type AuditRecord } from './audit.js';
import { CLUSTER_FILTERS, type ClusterFilter } from './cluster-state.js';
import type { FailureLimiter } from './failure-limiter.js';
import { sendJson, sendProblem, type AdminProblem } from './problem.js';
import { rollbackFields, type RollbackFields } from './rollback-body.js';
import { bearerToken, challenge, clientAddress, type TokenChecker } from './request-auth.js';

/** The admin API's versioned base path. */
const ADMIN_BASE_PATH = '/api/pullsecret/admin/v1';

/** Largest request body accepted (a POST takes none, or `{}`). */
const MAX_BODY_BYTES = 1024;
const MAX_URL_LENGTH = 2048;

/**
 * Actions planned but not built yet: answered 404 with a problem that says so (`rollback` and
 * `transfer-check` too when the server does not run them).
 */
const NOT_AVAILABLE: ReadonlySet<string> = new Set(['rollback']);

/** Rollback refusals that are about the cluster's versions, not the server: 409 with ADMIN-RBK-001. */
const ROLLBACK_REFUSALS: ReadonlySet<string> = new Set([
  'VERSION_DESTROYED',
  'SECRET_NOT_FOUND',
  'SECRET_UNMANAGED',
  'VERSION_NOT_ENABLED',
]);

interface AdminHandlerDeps {
  service: AdminService;
  tokens: TokenChecker;
  limiter: FailureLimiter;
  logger: Logger;
}

interface Route {
  action: AdminAction;
  method: string;
  clusterId?: string;
  filter?: ClusterFilter;
  /** Rollback: the version asked for, the pin's reason and end (body `{"toVersion": "3", ...}`). */
  rollback?: RollbackFields;
}

class Refusal extends Error {
  constructor(
    readonly problem: AdminProblem,
    readonly result: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(problem.detail);
  }
}

const refuse = (
  status: number,
  code: AdminProblem['code'],
  title: string,
  detail: string,
  result: string,
  headers?: Record<string, string>,
) => new Refusal({ status, code, title, detail }, result, headers);

/** @throws Refusal 405 (with `Allow`) unless `method` is the one the endpoint `path` takes. */
function onlyMethod(method: string, allowed: 'GET' | 'POST', path: string): void {
  if (method !== allowed)
    throw refuse(405, 'ADMIN-MTH-001', 'Method Not Allowed', `${path} takes ${allowed}`, 'invalid', {
      allow: allowed,
    });
}

/**
 * Matches the path to a route.
 * @throws Refusal (404 unknown path or planned action, 405 method, 400 hostile id or filter)
 */
function route(
  method: string,
  url: URL,
  transfers: boolean,
  offersRollback: boolean,
  offersRelease = false,
): Route {
  const rest = url.pathname.startsWith(`${ADMIN_BASE_PATH}/`)
    ? url.pathname.slice(ADMIN_BASE_PATH.length + 1)
    : undefined;
  const parts = rest?.split('/') ?? [];
  if (parts[0] !== 'clusters' || parts.length > 3)
    throw refuse(
      404,
      'ADMIN-NTF-001',
      'Not Found',
      `no such admin endpoint; the API lives under ${ADMIN_BASE_PATH}/clusters`,
      'not-found',
    );
  if (parts.length === 1) {
    onlyMethod(method, 'GET', 'clusters');
    const filter = url.searchParams.get('filter') ?? undefined;
    if (filter !== undefined && !(CLUSTER_FILTERS as readonly string[]).includes(filter)) {
      throw refuse(
        400,
        'ADMIN-REQ-001',
        'Bad Request',
        `filter must be one of ${CLUSTER_FILTERS.join(', ')}`,
        'invalid',
      );
    }
    return { action: 'list-clusters', method, filter: filter as ClusterFilter | undefined };
  }
  let clusterId: string;
  try {
    clusterId = decodeURIComponent(parts[1] ?? '');
    assertClusterId(clusterId);
  } catch (err) {
    // assertClusterId describes a refused id by length and hash only: it may be anything, a token too.
    const detail =
      err instanceof URIError ? 'invalid cluster id: bad percent-encoding' : toPullSecretError(err).message;
    throw refuse(400, 'ADMIN-ID-001', 'Bad Request', detail, 'invalid');
  }
  const action = parts[2];
  if (action === undefined) {
    onlyMethod(method, 'GET', 'clusters/{id}');
    return { action: 'get-cluster', method, clusterId };
  }
  if (action === 'reconcile') {
    onlyMethod(method, 'POST', 'clusters/{id}/reconcile');
    return { action: 'reconcile', method, clusterId };
  }
  if (action === 'rollback' && offersRollback) {
    onlyMethod(method, 'POST', 'clusters/{id}/rollback');
    return { action: 'rollback', method, clusterId };
  }
  if (action === 'rollback-release' && offersRelease) {
    onlyMethod(method, 'POST', 'clusters/{id}/rollback-release');
    return { action: 'rollback-release', method, clusterId };
  }
  if (action === 'transfer-check' && transfers) {
    onlyMethod(method, 'POST', 'clusters/{id}/transfer-check');
    return { action: 'transfer-check', method, clusterId };
  }
  if (NOT_AVAILABLE.has(action) || action === 'transfer-check') {
    const planned = action as 'rollback' | 'transfer-check';
    throw Object.assign(
      refuse(
        404,
        'ADMIN-NTF-002',
        'Not Available',
        `${planned} is not available on this server yet`,
        'not-available',
      ),
      { action: planned, clusterId },
    );
  }
  throw refuse(
    404,
    'ADMIN-NTF-001',
    'Not Found',
    `no such admin endpoint: clusters/{id}/${action.length > 32 ? 'unknown' : action.replace(/[^a-z-]/g, '?')}`,
    'not-found',
  );
}

/**
 * Reads a POST body of at most MAX_BODY_BYTES: empty or a JSON object whose fields are all in
 * `allowed` (string values). @throws Refusal (413, 400)
 */
async function readBody(
  req: IncomingMessage,
  allowed: readonly string[] = [],
): Promise<Record<string, string>> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES)
    throw refuse(
      413,
      'ADMIN-REQ-002',
      'Content Too Large',
      `the body may hold at most ${MAX_BODY_BYTES} bytes`,
      'invalid',
    );
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw refuse(
        413,
        'ADMIN-REQ-002',
        'Content Too Large',
        `the body may hold at most ${MAX_BODY_BYTES} bytes`,
        'invalid',
      );
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw refuse(400, 'ADMIN-REQ-001', 'Bad Request', 'the body must be empty or a JSON object', 'invalid');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw refuse(400, 'ADMIN-REQ-001', 'Bad Request', 'the body must be empty or a JSON object', 'invalid');
  const entries = Object.entries(value);
  if (entries.some(([key, v]) => !allowed.includes(key) || typeof v !== 'string')) {
    const takes =
      allowed.length === 0
        ? 'this action takes no parameters: send no body or {}'
        : `this action takes only ${allowed.map((k) => `"${k}" (a string)`).join(', ')}`;
    throw refuse(400, 'ADMIN-REQ-001', 'Bad Request', takes, 'invalid');
  }
  return Object.fromEntries(entries);
}

/**
 * The admin API's request handler: rate limit of failed attempts per client address, bearer token
 * check, routing with strict input checks, the action, and one audit line per request. Answers
 * JSON, or RFC 9457 problem+json on refusal. Never throws; no token byte reaches a response or a log.
 */
export function createAdminHandler(
  deps: AdminHandlerDeps,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => void handle(deps, req, res);
}

async function handle(deps: AdminHandlerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const client = clientAddress(req);
  const audit: AuditRecord = {
    action: 'unknown',
    tokenSlot: 'none',
    result: 'error',
    httpStatus: 500,
    client,
  };
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  try {
    const wait = deps.limiter.retryAfterSeconds(client);
    if (wait > 0)
      throw refuse(
        429,
        'ADMIN-RATE-001',
        'Too Many Requests',
        `too many failed attempts from this address; try again in ${wait} s`,
        'rate-limited',
        { 'retry-after': String(wait) },
      );
    const presented = bearerToken(req);
    const slot = deps.tokens.check(presented);
    if (slot === undefined) {
      deps.limiter.fail(client);
      const sent = req.headers.authorization !== undefined;
      throw refuse(
        401,
        'ADMIN-AUTH-001',
        'Unauthorized',
        sent ? 'the bearer token is not valid' : 'a bearer token is required (Authorization: Bearer <token>)',
        'unauthenticated',
        {
          'www-authenticate': challenge(sent),
        },
      );
    }
    audit.tokenSlot = slot;
    if ((req.url ?? '').length > MAX_URL_LENGTH)
      throw refuse(400, 'ADMIN-REQ-001', 'Bad Request', 'the URL is too long', 'invalid');
    let r: Route;
    try {
      r = route(
        req.method ?? 'GET',
        new URL(req.url ?? '/', 'http://admin'),
        deps.service.checksTransfers,
        deps.service.offersRollback,
        deps.service.offersRelease,
      );
    } catch (err) {
      const planned = err as Partial<Route>;
      if (planned.action !== undefined) audit.action = planned.action;
      if (planned.clusterId !== undefined) audit.clusterId = planned.clusterId;
      throw err;
    }
    audit.action = r.action;
    audit.clusterId = r.clusterId;
    if (r.method === 'POST') {
      const body = await readBody(req, r.action === 'rollback' ? ['toVersion', 'reason', 'expiresIn'] : []);
      r.rollback = rollbackFields(body, (detail) =>
        refuse(400, 'ADMIN-REQ-001', 'Bad Request', detail, 'invalid'),
      );
    }
    const { status, body } = await act(
      deps.service,
      r,
      controller.signal,
      `admin-api (${slot} token, ${client})`,
    );
    audit.result = status === 200 ? 'ok' : 'not-found';
    audit.httpStatus = status;
    if (status === 200) sendJson(res, status, body);
    else
      sendProblem(res, {
        status,
        code: 'ADMIN-NTF-001',
        title: 'Not Found',
        detail: `cluster ${r.clusterId ?? ''} does not exist`,
      });
  } catch (err) {
    if (err instanceof Refusal) {
      audit.result = err.result;
      audit.httpStatus = err.problem.status;
      sendProblem(res, err.problem, err.headers);
    } else if (audit.action === 'rollback' && ROLLBACK_REFUSALS.has(toPullSecretError(err).code)) {
      const error = toPullSecretError(err);
      audit.result = 'refused';
      audit.httpStatus = 409;
      sendProblem(res, {
        status: 409,
        code: 'ADMIN-RBK-001',
        title: 'Conflict',
        detail: `${error.code}: ${error.message}`,
      });
    } else {
      const error = toPullSecretError(err);
      audit.result = 'upstream-error';
      audit.httpStatus = error.retryable ? 503 : 502;
      sendProblem(res, {
        status: audit.httpStatus,
        code: 'ADMIN-UPS-001',
        title: error.retryable ? 'Service Unavailable' : 'Bad Gateway',
        detail: `${error.code}: ${error.message}`,
      });
    }
  } finally {
    writeAudit(deps.logger, audit);
  }
}

async function act(
  service: AdminService,
  r: Route,
  signal: AbortSignal,
  by: string,
): Promise<{ status: number; body?: unknown }> {
  if (r.action === 'list-clusters')
    return {
      status: 200,
      body: { items: await service.list(r.filter, signal), ...(r.filter ? { filter: r.filter } : {}) },
    };
  const id = r.clusterId ?? '';
  // A reconcile, a rollback or a transfer check is not cut short when the caller goes away: each
  // runs to its end like an event's.
  if (r.action === 'transfer-check') {
    const view = await service.transferCheck(id);
    return view === undefined ? { status: 404 } : { status: 200, body: view };
  }
  const value =
    r.action === 'reconcile'
      ? await service.reconcile(id)
      : r.action === 'rollback'
        ? await service.rollback(id, { ...r.rollback, by })
        : r.action === 'rollback-release'
          ? await service.release(id, by)
          : await service.cluster(id, signal);
  return value === undefined ? { status: 404 } : { status: 200, body: value };
}
