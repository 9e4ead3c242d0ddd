import { readFile, stat } from 'node:fs/promises';
import { PullSecretError } from '../errors/index.js';
import { redactor } from '../pullsecret/redact.js';

/** Supplies the bearer token for each request. */
interface TokenSource {
  /** The current token; `undefined` when no token file is configured. */
  token(): Promise<string | undefined>;
  /** Forgets the cached token, so the next call reads the file again (after a 401). */
  invalidate(): void;
  readonly file: string | undefined;
}

/** Printable ASCII only: anything else would break (or inject into) the Authorization header. */
const TOKEN = /^[\x21-\x7e]+$/;

/**
 * How long a token read from its file is used before the file is looked at again. A rotated token
 * (a re-mounted Kubernetes Secret swaps the file) is picked up within this time, and at once after a
 * 401. Looking on every request cost a `stat` per API call, two per event.
 */
export const TOKEN_RECHECK_MS = 1_000;

/**
 * Reads the bearer token from `file` and caches it: the file is looked at again at most once per
 * `recheckMs`, and read again only when its mtime, size or inode changed, so a rotated token is picked
 * up without a restart. Concurrent callers share one look. The token is registered with the redactor
 * and never logged.
 *
 * `service` names the caller in messages. `token()` throws CONFIG_INVALID when the file cannot be read,
 * is empty or holds more than one line.
 */
export function createTokenSource(
  file: string | undefined,
  service = 'HyperFleet API',
  recheckMs = TOKEN_RECHECK_MS,
): TokenSource {
  let cached: { key: string; token: string; checkedAt: number } | undefined;
  let looking: Promise<string> | undefined;

  /** Stats `path` and reads it when it changed since the cached token. */
  const look = async (path: string): Promise<string> => {
    const checkedAt = performance.now();
    let key: string;
    let text: string;
    try {
      const info = await stat(path);
      key = `${info.mtimeMs}:${info.size}:${info.ino}`;
      if (cached?.key === key) {
        cached = { ...cached, checkedAt };
        return cached.token;
      }
      text = await readFile(path, 'utf8');
    } catch (err) {
      const reason = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new PullSecretError(
        'CONFIG_INVALID',
        `cannot read the ${service} token file ${file} (${reason})`,
        { cause: err },
      );
    }
    const token = text.trim();
    if (token === '')
      throw new PullSecretError('CONFIG_INVALID', `the ${service} token file ${file} is empty`);
    if (!TOKEN.test(token)) {
      throw new PullSecretError(
        'CONFIG_INVALID',
        `the ${service} token file ${file} must hold one token of printable characters`,
      );
    }
    redactor.register([token]);
    cached = { key, token, checkedAt };
    return token;
  };

  return {
    file,
    invalidate: () => {
      cached = undefined;
    },
    async token() {
      if (file === undefined) return undefined;
      if (cached !== undefined && performance.now() - cached.checkedAt < recheckMs) return cached.token;
      looking ??= look(file).finally(() => {
        looking = undefined;
      });
      return looking;
    },
  };
}
