import { PullSecretError, trimServerText, type ErrorCode } from '../errors/index.js';
import type { ProblemDetails } from './types.js';

/** The API's code for "no route matched this URL" (its catch-all 404): our base URL is wrong. */
export const ROUTE_NOT_FOUND_CODE = 'HYPERFLEET-NTF-000';

/**
 * An error from talking to the HyperFleet API. Callers decide from `code` / `retryable` like for any
 * PullSecretError; `httpStatus` and `problemCode` are there for logs and tests.
 */
export class HyperFleetApiError extends PullSecretError {
  readonly httpStatus: number | undefined;
  readonly problemCode: string | undefined;

  /** `details.retryAfterMs`: how long the server asked us to wait (Retry-After), already capped. */
  constructor(
    code: ErrorCode,
    message: string,
    details: { httpStatus?: number; problemCode?: string; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(code, message, {
      ...(details.cause === undefined ? {} : { cause: details.cause }),
      ...(details.retryAfterMs === undefined ? {} : { retryAfterMs: details.retryAfterMs }),
    });
    this.httpStatus = details.httpStatus;
    this.problemCode = details.problemCode;
  }
}

/**
 * Makes server-provided text safe for an error message: control characters replaced, length bounded,
 * so a hostile or broken server can neither forge log lines nor flood them.
 */
export function boundText(text: string, max: number): string {
  return trimServerText(text, max);
}

/** Reads RFC 9457 fields out of a parsed body; anything that is not problem-shaped gives `undefined`. */
export function parseProblem(body: unknown): ProblemDetails | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const record = body as Record<string, unknown>;
  const text = (key: string): string | undefined =>
    typeof record[key] === 'string' ? record[key] : undefined;
  if (text('title') === undefined && text('code') === undefined && text('detail') === undefined)
    return undefined;
  const errors = Array.isArray(record.errors)
    ? record.errors.flatMap((e: unknown) => {
        if (typeof e !== 'object' || e === null) return [];
        const { field, message } = e as Record<string, unknown>;
        return typeof field === 'string' && typeof message === 'string' ? [{ field, message }] : [];
      })
    : undefined;
  return {
    type: text('type') ?? 'about:blank',
    title: text('title') ?? '',
    status: typeof record.status === 'number' ? record.status : 0,
    detail: text('detail'),
    code: text('code'),
    ...(errors === undefined ? {} : { errors }),
  };
}

/** `title: detail (CODE); field: message; …`, bounded. Field errors describe our request, never credentials. */
export function describeProblem(problem: ProblemDetails | undefined): string {
  if (problem === undefined) return 'no problem details';
  const parts = [problem.title, problem.detail].filter((p): p is string => p !== undefined && p !== '');
  let text = boundText(parts.join(': ') || 'no detail', 300);
  if (problem.code !== undefined) text += ` (${boundText(problem.code, 40)})`;
  const fields = (problem.errors ?? [])
    .slice(0, 5)
    .map((e) => `${boundText(e.field, 80)}: ${boundText(e.message, 120)}`);
  if (fields.length > 0) text += `; ${fields.join('; ')}`;
  if ((problem.errors?.length ?? 0) > 5) text += `; and ${(problem.errors?.length ?? 0) - 5} more`;
  return text;
}

/**
 * Retry-After as milliseconds (delta-seconds or an HTTP date), capped at `capMs`; `undefined` when
 * absent or unreadable.
 */
export function parseRetryAfter(
  value: string | undefined,
  capMs: number,
  now = Date.now(),
): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const trimmed = value.trim();
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * 1000 : Date.parse(trimmed) - now;
  if (Number.isNaN(ms)) return undefined;
  return Math.min(Math.max(ms, 0), capMs);
}

interface ResponseContext {
  /** E.g. `GET /clusters/{id}`: a template, so no server data is echoed. */
  operation: string;
  baseUrl: string;
  tokenFile: string | undefined;
  retryAfterMs?: number;
}

/**
 * Turns an HTTP error answer into the service's error:
 * `HYPERFLEET-NTF-000` → CONFIG_INVALID; 401/403 → API_UNAUTHENTICATED; 408/429/5xx → API_UNAVAILABLE
 * (retryable); 3xx → CONFIG_INVALID (we do not follow redirects with a bearer token); any other
 * status → API_REQUEST_INVALID.
 */
export function errorForStatus(
  status: number,
  problem: ProblemDetails | undefined,
  ctx: ResponseContext,
): HyperFleetApiError {
  const details = { httpStatus: status, problemCode: problem?.code, retryAfterMs: ctx.retryAfterMs };
  const said = describeProblem(problem);
  if (problem?.code === ROUTE_NOT_FOUND_CODE) {
    return new HyperFleetApiError(
      'CONFIG_INVALID',
      `the HyperFleet API base URL looks wrong: ${ctx.baseUrl} has no route for ${ctx.operation} ` +
        `(${ROUTE_NOT_FOUND_CODE})`,
      details,
    );
  }
  if (status === 401 || status === 403) {
    const hint =
      ctx.tokenFile === undefined
        ? 'no token file is configured'
        : `check the bearer token in ${ctx.tokenFile}`;
    return new HyperFleetApiError(
      'API_UNAUTHENTICATED',
      `the HyperFleet API refused our credentials (${status}) for ${ctx.operation}: ${hint}; ${said}`,
      details,
    );
  }
  if (status === 408 || status === 429 || status >= 500) {
    return new HyperFleetApiError(
      'API_UNAVAILABLE',
      `the HyperFleet API answered ${status} to ${ctx.operation}: ${said}`,
      details,
    );
  }
  if (status >= 300 && status < 400) {
    return new HyperFleetApiError(
      'CONFIG_INVALID',
      `the HyperFleet API base URL ${ctx.baseUrl} redirects (${status}) for ${ctx.operation}; configure the final URL`,
      details,
    );
  }
  return new HyperFleetApiError(
    'API_REQUEST_INVALID',
    `the HyperFleet API rejected ${ctx.operation} (${status}): ${said}`,
    details,
  );
}
