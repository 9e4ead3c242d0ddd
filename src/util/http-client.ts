import type { Dispatcher } from 'undici';

/**
 * Pieces shared by the HTTP clients (HyperFleet API, registry verification, admin client), which all
 * use undici: one client stack, one way to bound an answer and to name a network failure.
 */

/** The body of an answer, or `undefined` when it grew past `maxBytes` (the rest is then not read). */
export async function readBounded(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, size);
}

/**
 * undici's codes for what Node's sockets name otherwise: the server closed the connection before the
 * answer was complete (Node's client: ECONNRESET, "socket hang up"), or a phase timed out.
 */
const SOCKET_CODES: Readonly<Record<string, string>> = {
  UND_ERR_SOCKET: 'ECONNRESET',
  UND_ERR_CONNECT_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_HEADERS_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_BODY_TIMEOUT: 'ETIMEDOUT',
};

/**
 * The error code of a network failure as Node's sockets name it (`ECONNREFUSED`, `ECONNRESET`,
 * `ETIMEDOUT`, an OpenSSL code such as `DEPTH_ZERO_SELF_SIGNED_CERT`), or `undefined` when it has
 * none. Only the code: some error messages quote the request.
 */
export function networkErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? (SOCKET_CODES[code] ?? code) : undefined;
}
