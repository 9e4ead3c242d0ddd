import { readFile, stat } from 'node:fs/promises';
import { PullSecretError } from '../errors/index.js';
import { redactor } from '../pullsecret/redact.js';

/** Supplies the bearer token for each request. */
export interface TokenSource {
  /** The current token; `undefined` when no token file is configured. */
  token(): Promise<string | undefined>;
  /** Forgets the cached token, so the next call reads the file again (after a 401). */
  invalidate(): void;
  readonly file: string | undefined;
}

/** Printable ASCII only: anything else would break (or inject into) the Authorization header. */
const TOKEN = /^[\x21-\x7e]+$/;

/**
 * Reads the bearer token from `file` and caches it until the file's mtime, size or inode changes, so a
 * rotated token (a re-mounted Kubernetes Secret swaps the file) is picked up without a restart and an
 * unchanged one costs a `stat` only. The token is registered with the redactor and never logged.
 *
 * `service` names the caller in messages. `token()` throws CONFIG_INVALID when the file cannot be read, is empty or holds more than one line.
 */
export function createTokenSource(file: string | undefined, service = 'HyperFleet API'): TokenSource {
  let cached: { key: string; token: string } | undefined;
  return {
    file,
    invalidate: () => {
      cached = undefined;
    },
    async token() {
      if (file === undefined) return undefined;
      let key: string;
      let text: string;
      try {
        const info = await stat(file);
        key = `${info.mtimeMs}:${info.size}:${info.ino}`;
        if (cached?.key === key) return cached.token;
        text = await readFile(file, 'utf8');
      } catch (err) {
        const reason = (err as NodeJS.ErrnoException).code ?? 'unreadable';
        throw new PullSecretError('CONFIG_INVALID', `cannot read the ${service} token file ${file} (${reason})`, { cause: err });
      }
      const token = text.trim();
      if (token === '') throw new PullSecretError('CONFIG_INVALID', `the ${service} token file ${file} is empty`);
      if (!TOKEN.test(token)) {
        throw new PullSecretError('CONFIG_INVALID', `the ${service} token file ${file} must hold one token of printable characters`);
      }
      redactor.register([token]);
      cached = { key, token };
      return token;
    },
  };
}
