import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseYaml } from 'yaml';
import { discoveryDocument } from './discovery.js';
import type { CallLog, FaultInjector, RequestRecord } from './faults.js';
import { openApiDocument } from './openapi.js';
import { targetOf, type ApiOperations } from './operations.js';
import { parseRoute, type ResourceRoute } from './router.js';
import {
  badRequest,
  internalError,
  methodNotAllowed,
  StatusError,
  statusForCode,
  unauthorized,
  unsupportedMediaType,
} from './status.js';
import type { ObjectStore } from './store.js';
import { toTable, wantsTable } from './table.js';
import type { KubeObject } from './types.js';
import { serveWatch, type OpenWatch } from './watch.js';
import { reviewAccess } from './access-review.js';
import { authorizeRequest, type Identity } from './authorizer.js';

/** What the request handler needs from the server. */
export interface HandlerContext {
  ops: ApiOperations;
  store: ObjectStore;
  faults: FaultInjector;
  calls: CallLog;
  /** Bearer token → who it authenticates as. */
  identities: ReadonlyMap<string, Identity>;
  /** `host:port`, for discovery's serverAddressByClientCIDRs. */
  address: string;
  /** Open watch streams, so the server can close them or send bookmarks. */
  watches: Set<OpenWatch>;
  /** Interval of watch bookmarks (when a client allows them). */
  bookmarkIntervalMs?: number;
}

/** The API server's request body limit. */
const MAX_BODY = 3 * 1024 * 1024;

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY)
      throw new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_BODY}`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  const type = (req.headers['content-type'] ?? 'application/json').split(';')[0]?.trim() ?? '';
  const yaml = type === 'application/apply-patch+yaml';
  if (!yaml && !type.includes('json')) throw unsupportedMediaType(type);
  try {
    // YAML is a superset of JSON, so an apply patch may be either.
    return yaml ? (parseYaml(text) as unknown) : (JSON.parse(text) as unknown);
  } catch {
    throw badRequest(
      'the object provided is unrecognized (must be of type JSON): invalid character in request body',
    );
  }
}

function verbOf(method: string, route: ResourceRoute, params: URLSearchParams): string {
  const watch = params.get('watch');
  return method === 'GET' &&
    route.name === undefined &&
    (route.watchPath || watch === 'true' || watch === '1')
    ? 'WATCH'
    : method;
}

function dryRunOf(params: URLSearchParams, body: unknown): boolean {
  const values = [...params.getAll('dryRun')];
  const fromBody = (body as { dryRun?: unknown } | undefined)?.dryRun;
  if (Array.isArray(fromBody)) values.push(...fromBody.map(String));
  if (values.some((v) => v !== 'All'))
    throw badRequest(`dryRun: Unsupported value: ${JSON.stringify(values)}: supported values: "All"`);
  return values.length > 0;
}

function dispatch(
  ctx: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
  route: ResourceRoute,
  verb: string,
  params: URLSearchParams,
  body: unknown,
): void {
  const { ops } = ctx;
  const { rt, namespace, name } = route;
  const status = route.subresource === 'status';
  if (route.subresource !== undefined && !status) throw methodNotAllowed(verb);
  const table = wantsTable(req.headers.accept);
  // SubjectAccessReviews are create-only and never stored.
  if (rt.resource === 'subjectaccessreviews') {
    if (verb !== 'POST' || name !== undefined) throw methodNotAllowed(verb);
    return send(res, 201, reviewAccess(ctx.store, body));
  }
  if (verb === 'WATCH') {
    const watch = serveWatch(res, ctx.store, {
      rt,
      namespace,
      params,
      bookmarkIntervalMs: ctx.bookmarkIntervalMs,
    });
    ctx.watches.add(watch);
    res.on('close', () => ctx.watches.delete(watch));
    return;
  }
  if (name === undefined) {
    if (verb === 'GET') {
      const limit = params.get('limit');
      const list = ops.list(rt, namespace, {
        labelSelector: params.get('labelSelector'),
        fieldSelector: params.get('fieldSelector'),
        limit: limit === null ? undefined : Number(limit),
        continueToken: params.get('continue'),
      });
      const items = list.items as KubeObject[];
      return send(res, 200, table ? toTable(rt, items, ctx.store.currentResourceVersion()) : list);
    }
    if (verb === 'POST')
      return send(res, 201, ops.create(rt, namespace, body, { dryRun: dryRunOf(params, undefined) }));
    throw methodNotAllowed(verb);
  }
  switch (verb) {
    case 'GET': {
      const obj = ops.get(rt, namespace, name);
      return send(res, 200, table ? toTable(rt, [obj], obj.metadata.resourceVersion ?? '') : obj);
    }
    case 'PUT':
      return send(
        res,
        200,
        ops.replace(rt, namespace, name, body, { dryRun: dryRunOf(params, undefined), status }),
      );
    case 'PATCH': {
      const contentType = req.headers['content-type'] ?? '';
      const options = { dryRun: dryRunOf(params, undefined), status };
      if (!contentType.startsWith('application/apply-patch+yaml'))
        return send(res, 200, ops.patch(rt, namespace, name, contentType, body, options));
      const applied = ops.apply(rt, namespace, name, body, {
        ...options,
        fieldManager: params.get('fieldManager'),
      });
      return send(res, applied.created ? 201 : 200, applied.object);
    }
    case 'DELETE': {
      const options = { ...((body as object | undefined) ?? {}) } as Record<string, unknown>;
      const policy = params.get('propagationPolicy');
      if (policy !== null) options.propagationPolicy = policy;
      return send(res, 200, ops.delete(rt, namespace, name, options, { dryRun: dryRunOf(params, body) }));
    }
    default:
      throw methodNotAllowed(verb);
  }
}

/**
 * Handles one HTTPS request: bearer-token authentication (401 Status otherwise), authorization
 * (403, `authorizer.ts`), discovery, then resource routes with fault injection and call accounting. Every failure is answered with a Status body.
 */
export async function handleRequest(
  ctx: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'https://127.0.0.1');
  const method = (req.method ?? 'GET').toUpperCase();
  const route = parseRoute(url.pathname);
  const verb = route === undefined ? method : verbOf(method, route, url.searchParams);
  const record: RequestRecord = {
    method: verb,
    resource: route?.rt.resource ?? '',
    namespace: route?.namespace,
    name: route?.name,
    subresource: route?.subresource,
    path: url.pathname,
    status: 200,
  };
  try {
    const auth = req.headers.authorization ?? '';
    const identity = auth.startsWith('Bearer ')
      ? ctx.identities.get(auth.slice('Bearer '.length))
      : undefined;
    if (identity === undefined) throw unauthorized();
    record.user = identity.user;
    // Every request is authorized before anything else happens (RBAC denies by default).
    authorizeRequest(ctx.store, identity, verb, url.pathname, route);
    if (route === undefined) {
      const doc =
        method === 'GET'
          ? (discoveryDocument(url.pathname, ctx.address) ?? openApiDocument(url.pathname))
          : undefined;
      if (doc === undefined)
        throw new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
      return send(res, 200, doc);
    }
    const fault = ctx.faults.take(record);
    if (fault?.delayMs !== undefined) await sleep(fault.delayMs);
    if (fault?.reset) {
      record.status = 0;
      ctx.calls.add(record);
      req.socket.destroy();
      return;
    }
    if (fault?.status !== undefined) {
      // Drain the body so the client sees the answer rather than a reset.
      req.resume();
      throw statusForCode(
        fault.status,
        targetOf(route.rt, route.name ?? ''),
        verb.toLowerCase(),
        route.namespace,
      );
    }
    const body = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) ? await readBody(req) : undefined;
    dispatch(ctx, req, res, route, verb, url.searchParams, body);
    record.status = res.statusCode;
  } catch (err) {
    const status =
      err instanceof StatusError ? err : internalError(err instanceof Error ? err.message : String(err));
    record.status = status.code;
    if (!res.headersSent) send(res, status.code, status.body);
    else res.end();
  } finally {
    if (route !== undefined && record.status !== 0) ctx.calls.add(record);
  }
}
