import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** A listening HTTP server and how to stop it. */
export interface RunningServer {
  readonly port: number;
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/**
 * `/healthz` (200 while the process serves) and `/readyz` (200 when `ready()` says so, else 503:
 * broker disconnected, config not loaded, or draining). Default port 8080.
 */
export function startHealthServer(options: {
  port: number;
  host?: string;
  ready: () => { ready: boolean; reason?: string };
}): Promise<RunningServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const { ready, reason } = options.ready();
      res
        .writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' })
        .end(ready ? 'ready\n' : `not ready: ${reason ?? 'starting'}\n`);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
  return listen(server, options.port, options.host ?? '0.0.0.0');
}

/** A refusal of a `/metrics` scrape: its status and headers (e.g. 401 with WWW-Authenticate). */
export interface ScrapeRefusal {
  status: number;
  headers: Record<string, string>;
}

/**
 * Prometheus `/metrics` for `registry`. Default port 9090. With `authorize`, a scrape it refuses gets
 * its status and headers and no metrics (the admin token protection, docs/admin-api.md).
 */
export function startMetricsServer(options: {
  port: number;
  host?: string;
  registry: Registry;
  authorize?: (req: IncomingMessage) => ScrapeRefusal | undefined;
}): Promise<RunningServer> {
  const server = createServer((req, res) => {
    if ((req.url ?? '/').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    const refusal = options.authorize?.(req);
    if (refusal !== undefined) {
      res
        .writeHead(refusal.status, { 'content-type': 'text/plain', ...refusal.headers })
        .end('unauthorized\n');
      return;
    }
    options.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  return listen(server, options.port, options.host ?? '0.0.0.0');
}
