import { readFileSync } from 'node:fs';
import { Agent, request, type Dispatcher } from 'undici';
import { PullSecretError } from '../errors/index.js';
import { quoteIdentifier } from '../pullsecret/identifiers.js';
import { networkErrorCode, readBounded } from '../util/http-client.js';

/** Largest answer read (a list of many clusters stays far below it). */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

interface AdminRequest {
  /** `https://host:port` or `http://127.0.0.1:port` (the path is the API's own). */
  server: string;
  method: 'GET' | 'POST';
  /** Path below the API's base, e.g. `/clusters/abc`. */
  path: string;
  /** Bearer token; none sends no Authorization header. */
  token?: string;
  /** PEM CA certificate(s) to trust for an https server with a private CA. */
  ca?: string;
  timeoutMs?: number;
  /**
   * Connection pool to reuse (a benchmark; `ca` is then the pool's own business); default a fresh
   * connection per request (a CLI call makes one).
   */
  agent?: Dispatcher;
  /** JSON body of a POST (e.g. a rollback's `{toVersion}`); none sends an empty body. */
  body?: Record<string, string>;
}

/** A raw answer: status, headers and the parsed JSON body (undefined when none or not JSON). */
export interface AdminAnswer {
  status: number;
  /** By lower-case name. */
  headers: Record<string, string | string[] | undefined>;
  json: unknown;
}

/**
 * One request to the admin API (no redirects followed, bounded in time and size).
 * @throws ADMIN_UNAVAILABLE (connection refused, timeout, TLS failure named as such), CONFIG_INVALID (bad URL)
 */
export function adminRequest(req: AdminRequest): Promise<AdminAnswer> {
  let url: URL;
  try {
    url = new URL(`/api/pullsecret/admin/v1${req.path}`, req.server);
  } catch {
    return Promise.reject(
      new PullSecretError(
        'CONFIG_INVALID',
        `--server must be a URL such as https://adapter:8443 (got ${quoteIdentifier(req.server)})`,
      ),
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return Promise.reject(new PullSecretError('CONFIG_INVALID', '--server must be an http or https URL'));
  const timeoutMs = req.timeoutMs ?? 30_000;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (req.token !== undefined) headers.authorization = `Bearer ${req.token}`;
  const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
  if (req.method === 'POST') headers['content-length'] = String(payload?.length ?? 0);
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return send(url, req, headers, payload, timeoutMs);
}

/**
 * The exchange: `timeoutMs` bounds connecting and each wait for data (as a socket idle timeout
 * does), and the answer's size is bounded.
 */
async function send(
  url: URL,
  req: AdminRequest,
  headers: Record<string, string>,
  payload: Buffer | undefined,
  timeoutMs: number,
): Promise<AdminAnswer> {
  const own =
    req.agent === undefined
      ? new Agent({ connect: { timeout: timeoutMs, ...(req.ca === undefined ? {} : { ca: req.ca }) } })
      : undefined;
  try {
    const res = await request(url, {
      method: req.method,
      headers,
      body: payload,
      dispatcher: req.agent ?? own,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const body = await readBounded(res.body, MAX_ANSWER_BYTES);
    if (body === undefined) throw unreachable(url, new Error('answer too large'));
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, headers: res.headers, json };
  } catch (err) {
    if (err instanceof PullSecretError) throw err;
    throw unreachable(url, err as Error, timeoutMs);
  } finally {
    // A fresh pool per request, as Node's `agent: false` was: its connection is closed once answered.
    own?.destroy().catch(() => undefined);
  }
}

function unreachable(url: URL, err: Error, timeoutMs?: number): PullSecretError {
  const code = networkErrorCode(err) ?? '';
  const why =
    code === 'ECONNREFUSED'
      ? 'connection refused (is the adapter running with the admin API enabled, on this port?)'
      : code === 'ETIMEDOUT'
        ? `no answer within ${timeoutMs ?? 0} ms`
        : code === 'ENOTFOUND'
          ? 'unknown host'
          : /CERT|SELF_SIGNED|UNABLE_TO|ALTNAME|ERR_TLS|EPROTO/.test(code)
            ? `TLS failed (${code}): pass the CA that signed the server certificate with --ca-file`
            : code || 'network error';
  return new PullSecretError('ADMIN_UNAVAILABLE', `cannot reach the admin API at ${url.origin}: ${why}`, {
    cause: err,
  });
}

/** The token in a file's text: the `current.token` of an admin token file (dev stack), else the first line. */
function tokenIn(text: string): string {
  try {
    const parsed = JSON.parse(text) as { current?: { token?: unknown } };
    if (typeof parsed.current?.token === 'string') return parsed.current.token;
  } catch {
    // not an admin token file: a plain token file (e.g. the Secret's `token` key mounted as a file)
  }
  return text.split('\n')[0]?.trim() ?? '';
}

/**
 * Reads a bearer token file: a plain one (first line, trimmed), or an admin token file (its current
 * token). Never quotes the content.
 * @throws ADMIN_UNAUTHENTICATED when it is unreadable or empty
 */
export function readTokenFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new PullSecretError(
      'ADMIN_UNAUTHENTICATED',
      `cannot read the token file ${quoteIdentifier(file)}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      { cause: err },
    );
  }
  const token = tokenIn(text);
  if (token === '')
    throw new PullSecretError('ADMIN_UNAUTHENTICATED', `the token file ${quoteIdentifier(file)} is empty`);
  return token;
}

/**
 * Turns a refusal into one clear error; returns the JSON body on 200.
 * @throws ADMIN_UNAUTHENTICATED (401), ADMIN_REFUSED (403, 404, 429, other), ADMIN_UNAVAILABLE (503)
 */
export function expectOk(answer: AdminAnswer, what: string): unknown {
  if (answer.status === 200) return answer.json;
  const problem = (answer.json ?? {}) as { detail?: unknown; code?: unknown };
  const detail = typeof problem.detail === 'string' ? problem.detail : `HTTP ${answer.status}`;
  switch (answer.status) {
    case 401:
      throw new PullSecretError(
        'ADMIN_UNAUTHENTICATED',
        `the admin API refused the token (401): ${detail}; check --token-file (after a rotation the ` +
          `previous token works only until its grace ends)`,
      );
    case 403:
      throw new PullSecretError('ADMIN_REFUSED', `the admin API forbids ${what} (403): ${detail}`);
    case 404:
      throw new PullSecretError(
        'ADMIN_REFUSED',
        problem.code === 'ADMIN-NTF-002'
          ? `the server does not offer ${what} yet (404): ${detail}`
          : `${what}: not found (404): ${detail}`,
      );
    case 429:
      throw new PullSecretError(
        'ADMIN_REFUSED',
        `the admin API refuses requests from this address for now (429): ${detail}; retry after ` +
          `${String(answer.headers['retry-after'] ?? '?')} s`,
      );
    case 503:
      throw new PullSecretError(
        'ADMIN_UNAVAILABLE',
        `the admin API could not do ${what} now (503): ${detail}`,
      );
    default:
      throw new PullSecretError(
        'ADMIN_REFUSED',
        `the admin API refused ${what} (${answer.status}): ${detail}`,
      );
  }
}
