import { rootCertificates } from 'node:tls';
import { Agent, request, type Dispatcher } from 'undici';
import { networkErrorCode, readBounded } from '../util/http-client.js';

/** Largest body read from a registry or token endpoint; a token answer is a few kB. */
const MAX_BODY_BYTES = 256 * 1024;

/** One answer from a registry or its token service. */
export interface RegistryAnswer {
  status: number;
  /** By lower-case name. */
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request that never got an HTTP answer: connection refused, TLS failure, timeout, oversized body. */
export class RegistryNetworkError extends Error {
  constructor(
    message: string,
    /** Node's error code when there is one (`ECONNREFUSED`, `ETIMEDOUT`, `DEPTH_ZERO_SELF_SIGNED_CERT`). */
    readonly errno: string | undefined,
  ) {
    super(message);
    this.name = 'RegistryNetworkError';
  }
}

interface GetOptions {
  /** The whole `Authorization` value; never logged nor put in an error. */
  authorization?: string;
  timeoutMs: number;
  /** The connection pool, trusting the configured CA (undefined: undici's global one, Node's default CAs). */
  agent?: Dispatcher;
  signal?: AbortSignal;
}

/**
 * A connection pool for registry calls: keep-alive (a verification makes two to four calls to the
 * same host), at most 8 connections a host, trusting Node's bundled CAs plus `ca` when given (a
 * private registry's CA).
 */
export function registryAgent(ca: string | undefined): Dispatcher {
  return new Agent({
    connections: 8,
    ...(ca === undefined ? {} : { connect: { ca: [...rootCertificates, ca] } }),
  });
}

/**
 * One `GET`, bounded in time (`timeoutMs` for the whole exchange) and size. Redirects are not
 * followed: a credential is only sent where the registry's own challenge said.
 * @throws RegistryNetworkError when no HTTP answer arrived in time.
 */
export async function registryGet(url: URL, options: GetOptions): Promise<RegistryAnswer> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': 'pull-secret-verify',
  };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
  const signal =
    options.signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, options.signal]);
  try {
    // The deadline is the exchange's own, so undici's per-phase timers are off.
    const res = await request(url, {
      method: 'GET',
      headers,
      signal,
      headersTimeout: 0,
      bodyTimeout: 0,
      ...(options.agent === undefined ? {} : { dispatcher: options.agent }),
    });
    const body = await readBounded(res.body, MAX_BODY_BYTES);
    if (body === undefined)
      throw new RegistryNetworkError(`answer larger than ${MAX_BODY_BYTES} bytes`, undefined);
    return { status: res.statusCode, headers: res.headers, body: body.toString('utf8') };
  } catch (err) {
    if (err instanceof RegistryNetworkError) throw err;
    if (deadline.signal.aborted)
      throw new RegistryNetworkError(`no answer within ${options.timeoutMs} ms`, 'ETIMEDOUT');
    if (options.signal?.aborted === true) throw new RegistryNetworkError('aborted', 'ABORT_ERR');
    const code = networkErrorCode(err);
    throw new RegistryNetworkError(describeNetworkError(code), code);
  } finally {
    clearTimeout(timer);
  }
}

/** A network error in words, from its code only (messages of some errors quote the request). */
function describeNetworkError(errno: string | undefined): string {
  const code = errno ?? 'network error';
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO/.test(code))
    return `TLS failed (${code}): is verification.caFile the registry's CA?`;
  return code;
}
