import { Agent, type Dispatcher } from 'undici';
import { PullSecretError } from '../errors/index.js';
import { networkErrorCode } from '../util/http-client.js';
import { boundText, HyperFleetApiError, parseProblem } from './errors.js';
import type { ProblemDetails } from './types.js';

/** Largest response body read; a list page of clusters stays far below it. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/**
 * Connections to the API are kept open and reused (idle ones do not keep the process alive): an
 * adapter makes two calls per event, and a new connection each time would cost more than the call.
 * undici's client, not Node's: at two calls per event it costs about half the CPU per call
 * (docs/performance.md, "History").
 */
const SHARED = new Agent();

/**
 * A connection pool whose https connections trust only `ca` (PEM), for a service signed by a private
 * CA. Kept-alive like the shared one; one per client.
 */
export function privateCaDispatcher(ca: string): Dispatcher {
  return new Agent({ connect: { ca } });
}

interface ExchangeRequest {
  method: 'GET' | 'PUT' | 'POST';
  /** An `http:` or `https:` URL (TLS trusts the system CAs and NODE_EXTRA_CA_CERTS). */
  url: string;
  /** For messages: a route template such as `GET /clusters/{id}`. */
  operation: string;
  token: string | undefined;
  body?: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Connection pool to use instead of the shared one (e.g. `privateCaDispatcher(ca)`). */
  dispatcher?: Dispatcher;
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

const HYPERFLEET: ExchangeService = {
  name: 'HyperFleet API',
  caSetting: 'hyperfleetApi.caFile (or --ca-file)',
};

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
  headers: Record<string, string | string[] | undefined>;
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
  // Parsed when first asked for: a caller that decides on the status alone (a stored status report)
  // never parses the body.
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
  const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
  if (request.authorization !== undefined) headers.authorization = request.authorization;
  else if (request.token !== undefined) headers.authorization = `Bearer ${request.token}`;
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  return new Promise<RawResponse>((resolve, reject) => {
    const attempt = new Attempt(request, resolve, reject);
    // The deadline is the attempt's own (connecting included), so undici's per-phase timers are off.
    (request.dispatcher ?? SHARED).dispatch(
      {
        origin: url.origin,
        path: url.pathname + url.search,
        method: request.method,
        headers,
        body,
        headersTimeout: 0,
        bodyTimeout: 0,
      },
      attempt,
    );
  });
}

/**
 * One attempt as undici's dispatcher sees it: collects the answer up to the size bound and settles
 * once, on the first of the answer, an error, the deadline or the caller's abort. Whatever comes
 * later (the error of a connection we cut) is ignored.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private status = 0;
  private headers: RawResponse['headers'] = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly service: string;
  private readonly maxBytes: number;
  private readonly onAbort = () => this.settle(aborted(this.request, this.request.signal?.reason), true);

  constructor(
    private readonly request: ExchangeRequest,
    private readonly resolve: (response: RawResponse) => void,
    private readonly reject: (error: Error) => void,
  ) {
    this.service = (request.service ?? HYPERFLEET).name;
    this.maxBytes = request.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    this.timer = setTimeout(
      () =>
        this.settle(
          new HyperFleetApiError(
            'API_UNAVAILABLE',
            `no answer from the ${this.service} within ${request.timeoutMs} ms (${request.operation})`,
          ),
          true,
        ),
      request.timeoutMs,
    );
    request.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Settled while waiting for a connection: the request is dropped before it is written.
    if (this.settled) controller.abort(new Error('request no longer wanted'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: RawResponse['headers'],
  ): void {
    this.status = statusCode;
    this.headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size <= this.maxBytes) this.chunks.push(chunk);
    else {
      const message =
        `unexpected response (${this.service}, ${this.request.operation}): body larger ` +
        `than ${this.maxBytes} bytes`;
      this.settle(new HyperFleetApiError('API_REQUEST_INVALID', message, { httpStatus: this.status }), true);
    }
  }

  onResponseEnd(): void {
    // One chunk (a small answer, the usual case) is decoded as it is, without copying it first.
    const only = this.chunks.length === 1 ? this.chunks[0] : undefined;
    this.settle(undefined, false, {
      status: this.status,
      headers: this.headers,
      text: (only ?? Buffer.concat(this.chunks, this.size)).toString('utf8'),
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.settle(error, false);
  }

  /** `cut`: the error is ours (deadline, abort, size bound), so the request still in flight is cancelled. */
  private settle(error: Error | undefined, cut: boolean, response?: RawResponse): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.request.signal?.removeEventListener('abort', this.onAbort);
    if (error === undefined) {
      this.resolve(response as RawResponse);
      return;
    }
    this.reject(error instanceof PullSecretError ? error : unreachable(this.request, error));
    if (cut) this.controller?.abort(error);
  }
}

function aborted(request: ExchangeRequest, reason: unknown): PullSecretError {
  return new PullSecretError(
    'ABORTED',
    `${(request.service ?? HYPERFLEET).name} request aborted (${request.operation})`,
    { cause: reason },
  );
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
    return new HyperFleetApiError(
      'CONFIG_INVALID',
      `the ${service.name} at ${new URL(request.url).origin} presented a certificate we do not trust ` +
        `(${code}); set ${service.caSetting} to the CA that signs it`,
      {
        cause: err,
      },
    );
  }
  return new HyperFleetApiError(
    'API_UNAVAILABLE',
    `cannot reach the ${service.name} at ${new URL(request.url).origin} (${request.operation}): ${networkReason(err)}`,
    { cause: err },
  );
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
  const code = networkErrorCode(err);
  if (code !== undefined) return boundText(code, 40);
  return err instanceof Error ? boundText(err.name, 40) : 'network error';
}
