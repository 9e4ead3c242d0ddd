import { createHash } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
import {
  Observable,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';

/** TLS settings that tell one connection pool from another. */
const TLS_FIELDS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

/** Pools kept at once; more only when client certificates rotate, and then the oldest goes. */
const MAX_POOLS = 4;

/**
 * Connection reuse for the Kubernetes API clients. client-node 1.4 gives every request a new
 * `https.Agent`, so each call opens a connection and pays a TLS handshake. This middleware swaps
 * that agent for a kept-alive one with the same TLS settings (CA, client certificate, server name,
 * verification), so calls share connections. Proxy agents and anything else unexpected are left
 * as they are. When the settings change (a rotated client certificate), a new pool is made.
 */
export class KubeConnectionPool {
  private readonly pools = new Map<string, HttpAgent>();

  readonly middleware: ObservableMiddleware = {
    pre: (ctx: RequestContext) => {
      const agent = ctx.getAgent();
      if (agent !== undefined) ctx.setAgent(this.pooled(agent));
      return new Observable(Promise.resolve(ctx));
    },
    post: (ctx: ResponseContext) => new Observable(Promise.resolve(ctx)),
  };

  /** The pooled agent standing in for `agent`, or `agent` itself when it is not a plain HTTP(S) agent. */
  pooled(agent: HttpAgent): HttpAgent {
    const plainHttps = agent instanceof HttpsAgent && agent.constructor === HttpsAgent;
    const plainHttp = !plainHttps && agent instanceof HttpAgent && agent.constructor === HttpAgent;
    if (!plainHttps && !plainHttp) return agent;
    const { options } = agent as HttpAgent & { options: AgentOptions };
    const key = `${plainHttps ? 'https' : 'http'}:${fingerprint(options)}`;
    let pool = this.pools.get(key);
    if (pool === undefined) {
      const settings: AgentOptions = { keepAlive: true };
      for (const field of TLS_FIELDS)
        if (options[field] !== undefined) Object.assign(settings, { [field]: options[field] });
      pool = plainHttps ? new HttpsAgent(settings) : new HttpAgent(settings);
      if (this.pools.size >= MAX_POOLS) {
        const [oldestKey, oldest] = this.pools.entries().next().value as [string, HttpAgent];
        this.pools.delete(oldestKey);
        oldest.destroy();
      }
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** Closes every pooled connection. */
  destroy(): void {
    for (const pool of this.pools.values()) pool.destroy();
    this.pools.clear();
  }
}

/** A hash of the TLS settings (they hold key material, so only a digest is kept as the map key). */
function fingerprint(options: AgentOptions): string {
  const hash = createHash('sha256');
  for (const field of TLS_FIELDS) {
    const value = options[field];
    const parts = value === undefined ? [] : Array.isArray(value) ? value : [value];
    hash.update(`${field}:${parts.length}:`);
    for (const part of parts) {
      const text = Buffer.isBuffer(part)
        ? part.toString('base64')
        : typeof part === 'object'
          ? JSON.stringify(part)
          : String(part);
      hash.update(`${text.length}:${text};`);
    }
  }
  return hash.digest('hex');
}
