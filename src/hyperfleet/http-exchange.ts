import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type RequestOptions, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { PullSecretError } from '../errors/index.js';
import { boundText, HyperFleetApiError, parseProblem } from './errors.js';
import type { ProblemDetails } from './types.js';

/** Largest response body read; a list page of clusters stays far below it. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/**
 * Connections to the API are kept open and reused (idle ones do not keep the process alive): an
 * adapter makes two calls per event, and a new connection each time would cost more than the call.
 */
const AGENTS = {
  'http:': new HttpAgent({ keepAlive: true }),
  'https:': new HttpsAgent({ keepAlive: true }),
};

export interface ExchangeRequest {
  method: 'GET' | 'PUT' | 'POST';
  /** An `http:` or `https:` URL (TLS trusts the system CAs and NODE_EXTRA_CA_CERTS). */
  url: string;
  /** For messages: a route template such as `GET /clusters/{id}`. */
  operation: string;
  token: string | undefined;
  body?: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Connection pool to use instead of the shared one (e.g. an https agent trusting a private CA). */
  agent?: HttpAgent;
  /** The whole Authorization header value, sent instead of `Bearer {token}` (e.g. `AccessToken …`). */
  authorization?: string;
  /** Largest body read (default MAX_RESPONSE_BYTES). */
  maxResponseBytes?: number;
  /** Who is called, for messages (default: the HyperFleet API and its CA setting). */
  service?: ExchangeService;
}

/** The called service as messages name it, and the setting that names its CA file. */
export interface ExchangeService {
  name: string;
  caSetting: string;
}

const HYPERFLEET: ExchangeService = { name: 'HyperFleet API', caSetting: 'hyperfleetApi.caFile (or --ca-file)' };

export interface ExchangeResponse {
  status: number;
  /** A response header by lower-case name; `undefined` when absent. */
  header(name: string): string | undefined;
  /** Parsed JSON; `undefined` for an empty body. */
  json: unknown;
  /** The body as received (for callers that parse it with the strict parser). */
  text: string;
  /** True when the body claimed to be JSON (or was expected to be) but did not parse. */
  malformed: boolean;
  problem: ProblemDetails | undefined;
}

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * One HTTP request to the API, bounded in time (`timeoutMs`, per attempt: connecting, waiting and
 * reading the body) and size. Redirects are not followed: with a bearer token on board we only talk
 * to the configured origin.
 *
 * @throws ABORTED when `signal` fires; API_UNAVAILABLE (retryable) on a timeout or network error;
 *   CONFIG_INVALID for a server certificate we do not trust; API_REQUEST_INVALID for a body over
 *   MAX_RESPONSE_BYTES.
 */
export async function exchange(request: ExchangeRequest): Promise<ExchangeResponse> {
  if (request.signal?.aborted === true) throw aborted(request, request.signal.reason);
  const { status, headers, text } = await send(request);
  const header = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  // Parsed when first asked for: a caller that decides on the status alone (a stored status report) never parses the body.
  let parsed: ParsedBody | undefined;
  const body = () => (parsed ??= parseBody(text, header('content-type')));
  return {
    status,
    header,
    text,
    get json() {
      return body().json;
    },
    get malformed() {
      return body().malformed;
    },
    get problem() {
      return body().problem;
    },
  };
}

type ParsedBody = Pick<ExchangeResponse, 'json' | 'malformed' | 'problem'>;

function send(request: ExchangeRequest): Promise<RawResponse> {
  const url = new URL(request.url);
  const headers: Record<string, string | number> = { accept: 'application/json, application/problem+json' };
  if (request.authorization !== undefined) headers.authorization = request.authorization;
  else if (request.token !== undefined) headers.authorization = `Bearer ${request.token}`;
  // A string body goes out in the same write as the headers (a Buffer would take a second chunk).
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(body);
  }
  const https = url.protocol === 'https:';
  const service = (request.service ?? HYPERFLEET).name;
  return new Promise<RawResponse>((resolve, reject) => {
    let settled = false;
    // The first outcome wins; what the destroyed connection emits afterwards is ignored.
    const finish = (error: Error | undefined, response?: RawResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
      if (error === undefined) resolve(response as RawResponse);
      else {
        reject(error instanceof PullSecretError ? error : unreachable(request, error));
        outgoing.destroy();
      }
    };
    const onAbort = () => finish(aborted(request, request.signal?.reason));
    const timer = setTimeout(() => finish(new HyperFleetApiError('API_UNAVAILABLE', `no answer from the ${service} within ${request.timeoutMs} ms (${request.operation})`)), request.timeoutMs);
    let outgoing: ClientRequest;
    try {
      outgoing = (https ? httpsRequest : httpRequest)(requestOptions(url, request.method, headers, request.agent ?? AGENTS[https ? 'https:' : 'http:']), (response) => {
        readBounded(response, `${service}, ${request.operation}`, request.maxResponseBytes ?? MAX_RESPONSE_BYTES, (err, text) =>
          finish(err, { status: response.statusCode ?? 0, headers: response.headers, text: text ?? '' }),
        );
      });
    } catch (err) {
      // E.g. a header value Node refuses; its message names the header, never the value.
      clearTimeout(timer);
      reject(unreachable(request, err));
      return;
    }
    outgoing.on('error', (err) => finish(err));
    request.signal?.addEventListener('abort', onAbort, { once: true });
    outgoing.end(body);
  });
}

/**
 * The options of one request: Node's own `urlToHttpOptions(url)` with ours added to it, one object
 * (`http.request(url, options)` would build that object and then merge ours into another).
 */
function requestOptions(url: URL, method: string, headers: Record<string, string | number>, agent: HttpAgent): RequestOptions {
  const options: RequestOptions = urlToHttpOptions(url);
  options.method = method;
  options.headers = headers;
  options.agent = agent;
  return options;
}

/** Reads the whole body, then calls `done` once: with the text, or with the error that ended it. */
function readBounded(response: IncomingMessage, operation: string, maxBytes: number, done: (err: Error | undefined, text?: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  response.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= maxBytes) chunks.push(chunk);
    else done(new HyperFleetApiError('API_REQUEST_INVALID', `unexpected response (${operation}): body larger than ${maxBytes} bytes`, { httpStatus: response.statusCode }));
  });
  // One chunk (a small answer, the usual case) is decoded as it is, without copying it first.
  response.on('end', () => done(undefined, (chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, size)).toString('utf8')));
  response.on('error', (err) => done(err));
  // Closed before the end of the body: the connection broke (an 'error' may or may not come first).
  response.on('close', () => {
    if (!response.complete) done(Object.assign(new Error('response incomplete'), { code: 'ECONNRESET' }));
  });
}

function aborted(request: ExchangeRequest, reason: unknown): PullSecretError {
  return new PullSecretError('ABORTED', `${(request.service ?? HYPERFLEET).name} request aborted (${request.operation})`, { cause: reason });
}

/** OpenSSL's codes for a server certificate we do not trust; retrying cannot change the answer. */
const UNTRUSTED_CERTIFICATE = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function unreachable(request: ExchangeRequest, err: unknown): HyperFleetApiError {
  const code = (err as { code?: unknown }).code;
  const service = request.service ?? HYPERFLEET;
  if (typeof code === 'string' && UNTRUSTED_CERTIFICATE.has(code)) {
    return new HyperFleetApiError('CONFIG_INVALID', `the ${service.name} at ${new URL(request.url).origin} presented a certificate we do not trust (${code}); set ${service.caSetting} to the CA that signs it`, {
      cause: err,
    });
  }
  return new HyperFleetApiError('API_UNAVAILABLE', `cannot reach the ${service.name} at ${new URL(request.url).origin} (${request.operation}): ${networkReason(err)}`, { cause: err });
}

function parseBody(text: string, contentType: string | undefined): ParsedBody {
  if (text.trim() === '') return { json: undefined, malformed: false, problem: undefined };
  const looksJson = contentType === undefined || /\bjson\b/i.test(contentType);
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
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return boundText(code, 40);
  return err instanceof Error ? boundText(err.name, 40) : 'network error';
}
