import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProblemError } from './problem.js';

/** An answer before it is written: status, JSON body (none for 204) and extra headers. */
export interface Answer {
  status: number;
  body?: unknown;
  /** `application/json` by default; problems use `application/problem+json`. */
  contentType?: string;
  headers?: Record<string, string>;
  /** A raw body (an injected proxy page): written as is and not checked against the contract. */
  raw?: string;
}

/**
 * Deepest nesting of objects and arrays a body may have. Validation, cloning and persistence walk the
 * value recursively, and several thousand levels overflow the stack (a 500); real clients send a
 * handful of levels.
 */
export const MAX_JSON_DEPTH = 256;

/** Longest time an oversized body is read (and dropped) before the 413 goes out anyway. */
const OVERSIZED_DRAIN_MS = 10_000;

/** Nesting depth of JSON text, brackets inside strings not counted (one linear pass, no recursion). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/**
 * Reads a JSON request body: `application/json` (or another `+json` type) only, at most `limit` bytes
 * and `MAX_JSON_DEPTH` levels of nesting.
 *
 * @throws ProblemError: unsupportedMediaType, payloadTooLarge, malformed (empty, invalid or too deeply
 *   nested JSON)
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) {
    req.resume();
    throw new ProblemError(
      'unsupportedMediaType',
      `Content-Type must be application/json, not ${type === '' ? 'missing' : type.slice(0, 60)}`,
    );
  }
  const chunks = await new Promise<Buffer[]>((resolve, reject) => {
    const received: Buffer[] = [];
    let size = 0;
    let tooLarge: ProblemError | undefined;
    let timer: NodeJS.Timeout | undefined;
    const settle = (fail: ProblemError | undefined): void => {
      clearTimeout(timer);
      if (fail === undefined) resolve(received);
      else reject(fail);
    };
    // Event-based rather than `for await`: leaving an async iterator early destroys the request and
    // with it the socket, and the client would see a reset instead of the 413.
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) received.push(chunk);
      else if (tooLarge === undefined) {
        tooLarge = new ProblemError('payloadTooLarge', `request body exceeds ${limit} bytes`);
        received.length = 0;
        // The answer waits until the body is read to its end: a client that sends `Connection:
        // close` (or sends everything before it reads) would otherwise see the socket closed under
        // its upload, a reset instead of the 413. Bounded, so an endless body cannot hold it.
        timer = setTimeout(() => settle(tooLarge), OVERSIZED_DRAIN_MS);
      }
    });
    req.on('end', () => settle(tooLarge));
    // Cut short by the client: nobody will read the answer, but the handler must not wait forever.
    req.on('close', () =>
      settle(
        tooLarge ??
          (req.complete
            ? undefined
            : new ProblemError('malformed', 'Unable to read request body: the body was cut short')),
      ),
    );
    req.on('error', reject);
  });
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '')
    throw new ProblemError('malformed', 'Unable to read request body: the body is empty');
  if (jsonDepth(text) > MAX_JSON_DEPTH)
    throw new ProblemError(
      'malformed',
      `Unable to read request body: JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProblemError('malformed', 'Unable to read request body: invalid JSON');
  }
}

/**
 * Checks `Authorization: Bearer <token>` against the accepted tokens (none configured: no check).
 *
 * @throws ProblemError: unauthenticated (no credentials) or invalidCredentials
 */
export function checkBearer(req: IncomingMessage, tokens: readonly string[] | undefined): void {
  if (tokens === undefined) return;
  const header = req.headers.authorization;
  if (header === undefined)
    throw new ProblemError(
      'unauthenticated',
      'Account authentication could not be verified: no bearer token',
    );
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (match === null || !tokens.includes(match[1] ?? '')) {
    throw new ProblemError(
      'invalidCredentials',
      'Account authentication could not be verified: invalid bearer token',
    );
  }
}

/** Writes an answer; 204 never has a body. */
export function writeAnswer(res: ServerResponse, answer: Answer): void {
  const headers: Record<string, string> = { ...answer.headers };
  let payload: string | undefined;
  if (answer.raw !== undefined) {
    payload = answer.raw;
    headers['content-type'] = answer.contentType ?? 'text/plain';
  } else if (answer.status !== 204 && answer.body !== undefined) {
    payload = JSON.stringify(answer.body);
    headers['content-type'] = answer.contentType ?? 'application/json';
  }
  if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
  res.writeHead(answer.status, headers);
  res.end(payload);
}
