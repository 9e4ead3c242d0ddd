import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** Largest body read from a registry or token endpoint; a token answer is a few kB. */
const MAX_BODY_BYTES = 256 * 1024;

/** One answer from a registry or its token service. */
export interface RegistryAnswer {
  status: number;
  headers: IncomingHttpHeaders;
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

export interface GetOptions {
  /** The whole `Authorization` value; never logged nor put in an error. */
  authorization?: string;
  timeoutMs: number;
  /** A TLS agent trusting the configured CA (undefined: Node's default CAs). */
  agent?: HttpsAgent;
  signal?: AbortSignal;
}

/**
 * A TLS agent for registry calls: keep-alive (a verification makes two to four calls to the same
 * host), trusting Node's bundled CAs plus `ca` when given (a private registry's CA).
 */
export function registryAgent(ca: string | undefined): HttpsAgent {
  return new HttpsAgent({
    keepAlive: true,
    maxSockets: 8,
    ...(ca === undefined ? {} : { ca: [...rootCertificates, ca] }),
  });
}

/**
 * One `GET`, bounded in time (`timeoutMs` for the whole exchange) and size. Redirects are not
 * followed: a credential is only sent where the registry's own challenge said.
 * @throws RegistryNetworkError when no HTTP answer arrived in time.
 */
export function registryGet(url: URL, options: GetOptions): Promise<RegistryAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': 'pull-secret-verify',
    };
    if (options.authorization !== undefined) headers.authorization = options.authorization;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    const fail = (message: string, errno: string | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(new RegistryNetworkError(message, errno));
    };
    const req = send(
      url,
      {
        method: 'GET',
        headers,
        ...(url.protocol === 'https:' && options.agent !== undefined ? { agent: options.agent } : {}),
        signal: options.signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) fail(`answer larger than ${MAX_BODY_BYTES} bytes`, undefined);
          else chunks.push(chunk);
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
        res.on('error', (err: NodeJS.ErrnoException) => fail(describeNetworkError(err), err.code));
      },
    );
    const timer = setTimeout(
      () => fail(`no answer within ${options.timeoutMs} ms`, 'ETIMEDOUT'),
      options.timeoutMs,
    );
    req.on('error', (err: NodeJS.ErrnoException) => fail(describeNetworkError(err), err.code));
    req.end();
  });
}

/** A network error in words, from its code only (messages of some errors quote the request). */
function describeNetworkError(err: NodeJS.ErrnoException): string {
  if (err.name === 'AbortError') return 'aborted';
  const code = err.code ?? 'network error';
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO/.test(code))
    return `TLS failed (${code}): is verification.caFile the registry's CA?`;
  return code;
}
