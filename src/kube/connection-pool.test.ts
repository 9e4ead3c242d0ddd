import assert from 'node:assert/strict';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { describe, it } from 'node:test';
import { KubeConnectionPool } from './connection-pool.js';

describe('KubeConnectionPool', () => {
  it('stands in one kept-alive agent per TLS setting for the per-request agents', () => {
    const pool = new KubeConnectionPool();
    const a = pool.pooled(new HttpsAgent({ ca: 'CA-1', rejectUnauthorized: true }));
    const b = pool.pooled(new HttpsAgent({ ca: 'CA-1', rejectUnauthorized: true }));
    const otherCa = pool.pooled(new HttpsAgent({ ca: 'CA-2', rejectUnauthorized: true }));
    const otherCert = pool.pooled(
      new HttpsAgent({ ca: 'CA-1', cert: Buffer.from('CERT'), rejectUnauthorized: true }),
    );
    assert.equal(a, b);
    assert.ok(a instanceof HttpsAgent);
    const { options } = a as HttpAgent & { options: { keepAlive?: boolean; ca?: unknown } };
    assert.equal(options.keepAlive, true);
    assert.equal(options.ca, 'CA-1');
    assert.notEqual(a, otherCa);
    assert.notEqual(a, otherCert);
    const plain = pool.pooled(new HttpAgent());
    assert.ok(!(plain instanceof HttpsAgent));
    pool.destroy();
  });

  it('leaves other agents (proxies) alone and keeps a bounded number of pools', () => {
    const pool = new KubeConnectionPool();
    class ProxyAgent extends HttpsAgent {}
    const proxy = new ProxyAgent();
    assert.equal(pool.pooled(proxy), proxy);
    const first = pool.pooled(new HttpsAgent({ ca: 'rotated-0' }));
    for (let i = 1; i <= 4; i++) pool.pooled(new HttpsAgent({ ca: `rotated-${i}` }));
    assert.notEqual(pool.pooled(new HttpsAgent({ ca: 'rotated-0' })), first, 'the oldest pool was dropped');
    pool.destroy();
  });
});
