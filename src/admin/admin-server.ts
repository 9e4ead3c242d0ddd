import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { describeError, PullSecretError } from '../errors/index.js';
import type { Logger } from '../observability/logger.js';
import { quoteIdentifier } from '../pullsecret/identifiers.js';

/** Certificate and key files of the admin API's TLS. */
interface TlsFiles {
  certFile: string;
  keyFile: string;
}

interface AdminServerOptions {
  host: string;
  port: number;
  /** Without it, plain HTTP (the config allows that on a loopback host only). */
  tls?: TlsFiles;
  /** How often the TLS files are checked for a change (default 5 s). */
  tlsPollMs?: number;
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  logger: Logger;
}

/** A listening admin server. */
export interface RunningAdminServer {
  readonly port: number;
  readonly protocol: 'http' | 'https';
  /** Re-reads the TLS files now (also done when they change); keeps the old ones when the new do not load. */
  reloadTls(): boolean;
  close(): Promise<void>;
}

/** @throws CONFIG_INVALID naming the file that cannot be read (never its content) */
function readTls(files: TlsFiles): { cert: string; key: string } {
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new PullSecretError(
        'CONFIG_INVALID',
        `cannot read the admin API TLS ${what} ${quoteIdentifier(file)}: ` +
          `${(err as NodeJS.ErrnoException).code ?? 'error'}`,
        { cause: err },
      );
    }
  };
  return { cert: read(files.certFile, 'certificate'), key: read(files.keyFile, 'key') };
}

/**
 * Starts the admin API server: HTTPS from certificate files, reloaded when they change (a rotated
 * cert-manager certificate needs no restart), or plain HTTP. Slow clients cannot hold it open:
 * headers within 10 s, a whole request within 30 s.
 * @throws CONFIG_INVALID for unreadable or unusable TLS files; the listen error (EADDRINUSE...)
 */
export async function startAdminServer(options: AdminServerOptions): Promise<RunningAdminServer> {
  let server: Server | HttpsServer;
  const tls = options.tls;
  if (tls !== undefined) {
    try {
      server = createHttpsServer({ ...readTls(tls), minVersion: 'TLSv1.2' }, options.handler);
    } catch (err) {
      if (err instanceof PullSecretError) throw err;
      throw new PullSecretError(
        'CONFIG_INVALID',
        `the admin API TLS certificate or key cannot be used: ${(err as Error).message.split('\n')[0] ?? ''}`,
        { cause: err },
      );
    }
  } else {
    server = createHttpServer(options.handler);
  }
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;

  const reloadTls = (): boolean => {
    if (tls === undefined) return false;
    try {
      (server as HttpsServer).setSecureContext({ ...readTls(tls), minVersion: 'TLSv1.2' });
      options.logger.info(
        { operation: 'admin-tls-reload', cert_file: tls.certFile },
        'Admin API certificate reloaded',
      );
      return true;
    } catch (err) {
      options.logger.warn(
        { operation: 'admin-tls-reload', cert_file: tls.certFile, ...describeError(err) },
        'Could not reload the admin API certificate; keeping the current one',
      );
      return false;
    }
  };
  const onChange = (now: { mtimeMs: number }, before: { mtimeMs: number }) => {
    if (now.mtimeMs !== before.mtimeMs) reloadTls();
  };
  if (tls !== undefined) {
    for (const file of [tls.certFile, tls.keyFile])
      watchFile(file, { interval: options.tlsPollMs ?? 5_000, persistent: false }, onChange);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    protocol: tls === undefined ? 'http' : 'https',
    reloadTls,
    close: () =>
      new Promise((done) => {
        if (tls !== undefined) for (const file of [tls.certFile, tls.keyFile]) unwatchFile(file, onChange);
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
