import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import { PullSecretError } from '../errors/index.js';
import { quoteIdentifier } from '../pullsecret/identifiers.js';
import type { Logger } from '../observability/logger.js';
import { withRetry, type RetryPolicy } from '../util/retry.js';
import { clusterPath, normalizeBaseUrl } from './base-url.js';
import { errorForStatus, HyperFleetApiError, parseRetryAfter, ROUTE_NOT_FOUND_CODE } from './errors.js';
import { exchange, privateCaDispatcher, type ExchangeResponse } from './http-exchange.js';
import {
  adapterStatusListSchema,
  adapterStatusReportSchema,
  clusterListSchema,
  clusterSchema,
  describeIssues,
} from './schemas.js';
import { createTokenSource } from './token-source.js';
import type { AdapterStatusList, AdapterStatusReport, Cluster, ClusterList } from './types.js';

export interface HyperFleetClientOptions {
  /** E.g. `https://hyperfleet.example.com`; `/api/hyperfleet/v1` is appended unless already there. */
  baseUrl: string;
  /** File holding the bearer token; re-read when it changes. Without it, requests carry no credentials. */
  tokenFile?: string;
  /**
   * PEM file of the CA certificate(s) that sign an https API's certificate; read once, at creation.
   * Without it the system trust store (plus NODE_EXTRA_CA_CERTS) is used.
   */
  caFile?: string;
  /** Per attempt, in ms (default 10 000). */
  timeoutMs?: number;
  retry: RetryPolicy;
  logger?: Logger;
  /** Upper bound on a server's Retry-After, in ms (default 30 000). */
  maxRetryAfterMs?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

/** `stored`: 201; `stale`: 204, discarded as older than what the API has (not an error); `gone`: 404. */
export type PutStatusOutcome = 'stored' | 'stale' | 'gone';

export interface HyperFleetClient {
  /** The normalized base URL, ending in `/api/hyperfleet/v1`. */
  readonly baseUrl: string;
  /**
   * `GET /clusters/{id}`. Resolves `undefined` when the cluster does not exist (404): it is gone.
   *
   * @throws IDENTIFIER_INVALID (before any request), CONFIG_INVALID (`HYPERFLEET-NTF-000`, token file),
   *   API_UNAUTHENTICATED, API_UNAVAILABLE (after retries), API_REQUEST_INVALID, ABORTED
   */
  getCluster(clusterId: string, options?: CallOptions): Promise<Cluster | undefined>;
  /**
   * `PUT /clusters/{id}/statuses`. The report is checked locally first (mandatory conditions etc.).
   *
   * @throws like `getCluster`; API_REQUEST_INVALID for a report the contract does not allow
   */
  putStatus(clusterId: string, report: AdapterStatusReport, options?: CallOptions): Promise<PutStatusOutcome>;
  /**
   * `GET /clusters?page&size&order=created_time asc`: one page (page ≥ 1, size 1-100; defaults 1 and
   * 20), oldest first, so a walk over the pages is not shifted by clusters created meanwhile.
   *
   * @throws like `getCluster`; CONFIG_INVALID for a bad page/size or a 404 on the collection
   */
  listClusters(paging?: { page?: number; size?: number }, options?: CallOptions): Promise<ClusterList>;
  /**
   * `GET /clusters/{id}/statuses?page&size`: one page of the cluster's adapter statuses; `undefined`
   * when the cluster does not exist (404).
   *
   * @throws like `listClusters`
   */
  listStatuses(
    clusterId: string,
    paging?: { page?: number; size?: number },
    options?: CallOptions,
  ): Promise<AdapterStatusList | undefined>;
}

interface Call<T> {
  method: 'GET' | 'PUT';
  path: string;
  operation: string;
  clusterId?: string;
  body?: unknown;
  /** Handles the statuses the operation expects; returns `undefined` for any other (→ error by status). */
  interpret: (response: ExchangeResponse) => { value: T } | undefined;
}

/**
 * Client of the HyperFleet API (contracts/hyperfleet-api-openapi-1.0.25.yaml) over HTTP/1.1 with
 * kept-alive connections. Retries 408/429/5xx, timeouts and network errors with jittered backoff (honouring
 * Retry-After up to a cap); never retries 4xx. A malformed success answer is a permanent
 * API_REQUEST_INVALID ("unexpected response"): the same request to the same server would get the
 * same answer, so retrying only delays the report of a contract mismatch.
 *
 * @throws CONFIG_INVALID at creation for a bad base URL, or a CA file that is unreadable or set for http
 */
export function createHyperFleetClient(options: HyperFleetClientOptions): HyperFleetClient {
  const baseUrl = normalizeBaseUrl(options.baseUrl);
  if (options.caFile !== undefined && !baseUrl.startsWith('https:')) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `a HyperFleet API CA file is set, but ${baseUrl} is not an https URL`,
    );
  }
  const dispatcher =
    options.caFile === undefined ? undefined : privateCaDispatcher(readCaFile(options.caFile));
  const tokens = createTokenSource(options.tokenFile);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
  const context = (operation: string, retryAfterMs?: number) => ({
    operation,
    baseUrl,
    tokenFile: tokens.file,
    retryAfterMs,
  });

  /** The answer checked by `schema`, the one definition of what the client relies on. */
  function parse<S extends z.ZodType>(schema: S, response: ExchangeResponse, operation: string): z.output<S> {
    const result = response.malformed ? undefined : schema.safeParse(response.json);
    if (result?.success === true) return result.data;
    const why = result === undefined ? 'body is not JSON' : describeIssues(result.error);
    throw new HyperFleetApiError(
      'API_REQUEST_INVALID',
      `unexpected response from the HyperFleet API (${operation}): ${why}`,
      {
        httpStatus: response.status,
      },
    );
  }

  function notFound(response: ExchangeResponse, call: { operation: string; clusterId?: string }): void {
    if (response.problem?.code === ROUTE_NOT_FOUND_CODE)
      throw errorForStatus(404, response.problem, context(call.operation));
    if (response.problem === undefined) {
      // A proxy may strip the body; the API's own 404s always carry problem details, so say so.
      options.logger?.warn(
        { cluster_id: call.clusterId, operation: call.operation },
        'hyperfleet api 404 without problem details; treated as not found',
      );
    }
  }

  /** A GET of something of one cluster: the parsed answer on 200, `undefined` on 404 (the cluster is gone). */
  async function readOrGone<S extends z.ZodType>(
    schema: S,
    operation: string,
    clusterId: string,
    path: string,
    callOptions: CallOptions,
  ): Promise<z.output<S> | undefined> {
    return await call<z.output<S> | undefined>(
      {
        method: 'GET',
        path,
        operation,
        clusterId,
        interpret: (response) => {
          if (response.status === 200) return { value: parse(schema, response, operation) };
          if (response.status !== 404) return undefined;
          notFound(response, { operation, clusterId });
          return { value: undefined };
        },
      },
      callOptions,
    );
  }

  async function call<T>(spec: Call<T>, callOptions: CallOptions): Promise<T> {
    let waitUntil = 0;
    return withRetry(
      options.retry,
      async () => {
        const remaining = waitUntil - Date.now();
        if (remaining > 0) await sleepOrAbort(remaining, callOptions.signal);
        const token = await tokens.token();
        const response = await exchange({
          method: spec.method,
          url: `${baseUrl}${spec.path}`,
          operation: spec.operation,
          token,
          body: spec.body,
          timeoutMs,
          signal: callOptions.signal,
          dispatcher,
        });
        const handled = spec.interpret(response);
        if (handled !== undefined) return handled.value;
        const retryAfterMs = parseRetryAfter(response.header('retry-after'), maxRetryAfterMs);
        if (response.status === 401) tokens.invalidate();
        const error = errorForStatus(
          response.status,
          response.problem,
          context(spec.operation, retryAfterMs),
        );
        if (error.retryable && retryAfterMs !== undefined) waitUntil = Date.now() + retryAfterMs;
        throw error;
      },
      {
        signal: callOptions.signal,
        onRetry: ({ attempt, delayMs, error }) => {
          const e = error as Partial<HyperFleetApiError>;
          options.logger?.warn(
            {
              cluster_id: spec.clusterId,
              operation: spec.operation,
              attempt,
              delay_ms: Math.max(delayMs, e.retryAfterMs ?? 0),
              error_code: e.code,
              http_status: e.httpStatus,
            },
            'hyperfleet api call failed; retrying',
          );
        },
      },
    );
  }

  return {
    baseUrl,

    async getCluster(clusterId, callOptions = {}) {
      return await readOrGone(
        clusterSchema,
        'GET /clusters/{id}',
        clusterId,
        clusterPath(clusterId),
        callOptions,
      );
    },

    async putStatus(clusterId, report, callOptions = {}) {
      const operation = 'PUT /clusters/{id}/statuses';
      const path = clusterPath(clusterId, '/statuses');
      const checked = adapterStatusReportSchema.safeParse(report);
      if (!checked.success) {
        throw new PullSecretError(
          'API_REQUEST_INVALID',
          `status report for cluster ${clusterId} is invalid: ${describeIssues(checked.error)}`,
        );
      }
      return await call<PutStatusOutcome>(
        {
          method: 'PUT',
          path,
          operation,
          clusterId,
          body: checked.data,
          interpret: (response) => {
            // The status code decides: the write is done on 201, so a body we cannot read is no reason to fail it.
            if (response.status === 200 || response.status === 201) return { value: 'stored' };
            if (response.status === 204) return { value: 'stale' };
            if (response.status !== 404) return undefined;
            notFound(response, { operation, clusterId });
            return { value: 'gone' };
          },
        },
        callOptions,
      );
    },

    async listClusters(paging = {}, callOptions = {}) {
      const operation = 'GET /clusters';
      return await call<ClusterList>(
        {
          method: 'GET',
          path: `/clusters?${pageQuery(paging)}`,
          operation,
          interpret: (response) => {
            if (response.status === 200) return { value: parse(clusterListSchema, response, operation) };
            if (response.status === 404) {
              throw new HyperFleetApiError(
                'CONFIG_INVALID',
                `the HyperFleet API base URL looks wrong: ${baseUrl} has no cluster collection (404)`,
                {
                  httpStatus: 404,
                  problemCode: response.problem?.code,
                },
              );
            }
            return undefined;
          },
        },
        callOptions,
      );
    },

    async listStatuses(clusterId, paging = {}, callOptions = {}) {
      const path = `${clusterPath(clusterId, '/statuses')}?${pageQuery(paging)}`;
      return await readOrGone(
        adapterStatusListSchema,
        'GET /clusters/{id}/statuses',
        clusterId,
        path,
        callOptions,
      );
    },
  };
}

/** hyperfleet-api answers 400 to a larger page (pkg/services/types.go `MaxPageSize`). */
const MAX_PAGE_SIZE = 100;

/**
 * `page=…&size=…&order=created_time asc` (defaults 1 and 20). The order is explicit because the API
 * lists newest first by default, where every cluster created during a walk shifts the pages.
 * @throws CONFIG_INVALID unless page is a positive int32 and size 1-100
 */
function pageQuery(paging: { page?: number; size?: number }): string {
  const page = paging.page ?? 1;
  const size = paging.size ?? 20;
  const badPage = !Number.isInteger(page) || page < 1 || page > 2 ** 31 - 1;
  if (badPage) throw new PullSecretError('CONFIG_INVALID', 'page must be a positive integer');
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    throw new PullSecretError('CONFIG_INVALID', `size must be 1-${MAX_PAGE_SIZE} (the API's largest page)`);
  }
  return `page=${page}&size=${size}&order=created_time%20asc`;
}

/**
 * Reads a PEM CA file for an https service. @throws CONFIG_INVALID naming the file when it cannot be
 * read or holds no PEM certificate.
 */
export function readCaFile(file: string, service = 'HyperFleet API'): string {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new PullSecretError(
      'CONFIG_INVALID',
      `cannot read the ${service} CA file ${quoteIdentifier(file)}: ${typeof code === 'string' ? code : 'unreadable'}`,
      { cause: err },
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `the ${service} CA file ${quoteIdentifier(file)} holds no PEM certificate`,
    );
  }
  return pem;
}

async function sleepOrAbort(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch (abort) {
    throw new PullSecretError('ABORTED', 'operation aborted while waiting to retry', { cause: abort });
  }
}
