import { PullSecretError } from '../errors/index.js';
import { boundText, HyperFleetApiError, parseProblem } from './errors.js';
import type { ProblemDetails } from './types.js';

/** Largest response body read; a list page of clusters stays far below it. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

export interface ExchangeRequest {
  method: 'GET' | 'PUT';
  url: string;
  /** For messages: a route template such as `GET /clusters/{id}`. */
  operation: string;
  token: string | undefined;
  body?: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
  fetch: typeof fetch;
}

export interface ExchangeResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON; `undefined` for an empty body. */
  json: unknown;
  /** True when the body claimed to be JSON (or was expected to be) but did not parse. */
  malformed: boolean;
  problem: ProblemDetails | undefined;
}

/**
 * One HTTP request to the API, bounded in time (`timeoutMs`, per attempt) and size. Redirects are not
 * followed: with a bearer token on board we only talk to the configured origin.
 *
 * @throws ABORTED when `signal` fires; API_UNAVAILABLE (retryable) on a timeout or network error.
 */
export async function exchange(request: ExchangeRequest): Promise<ExchangeResponse> {
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal === undefined ? timeout : AbortSignal.any([request.signal, timeout]);
  const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
  if (request.token !== undefined) headers.authorization = `Bearer ${request.token}`;
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  try {
    const response = await request.fetch(request.url, {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      redirect: 'manual',
      signal,
    });
    const text = await readBounded(response, request.operation);
    return { status: response.status, headers: response.headers, ...parseBody(text, response.headers.get('content-type')) };
  } catch (err) {
    if (err instanceof PullSecretError) throw err;
    if (request.signal?.aborted === true) {
      throw new PullSecretError('ABORTED', `HyperFleet API request aborted (${request.operation})`, { cause: err });
    }
    if (timeout.aborted) {
      throw new HyperFleetApiError('API_UNAVAILABLE', `no answer from the HyperFleet API within ${request.timeoutMs} ms (${request.operation})`, { cause: err });
    }
    throw new HyperFleetApiError(
      'API_UNAVAILABLE',
      `cannot reach the HyperFleet API at ${new URL(request.url).origin} (${request.operation}): ${networkReason(err)}`,
      { cause: err },
    );
  }
}

async function readBounded(response: Response, operation: string): Promise<string> {
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const value of response.body) {
    const chunk = value as Uint8Array;
    size += chunk.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await response.body.cancel();
      throw new HyperFleetApiError('API_REQUEST_INVALID', `unexpected response from the HyperFleet API (${operation}): body larger than ${MAX_RESPONSE_BYTES} bytes`, {
        httpStatus: response.status,
      });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(text: string, contentType: string | null): Pick<ExchangeResponse, 'json' | 'malformed' | 'problem'> {
  if (text.trim() === '') return { json: undefined, malformed: false, problem: undefined };
  const looksJson = contentType === null || /\bjson\b/i.test(contentType);
  if (!looksJson) return { json: undefined, malformed: true, problem: undefined };
  try {
    const json: unknown = JSON.parse(text);
    return { json, malformed: false, problem: parseProblem(json) };
  } catch {
    return { json: undefined, malformed: true, problem: undefined };
  }
}

/** A short, safe reason for a network failure: the socket error code, never a message with data in it. */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } }).cause;
  if (typeof cause?.code === 'string') return boundText(cause.code, 40);
  if (err instanceof Error && err.name === 'TypeError') return 'network error';
  return err instanceof Error ? boundText(err.name, 40) : 'network error';
}
