import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { TokenManager } from '../../src/admin/token-manager.js';
import { ADMIN_TOKEN_KEYS, secretTokenStorage } from '../../src/admin/admin-token-secret.js';
import { startKubernetesTestServer, type KubernetesTestServer } from '../servers/kubernetes/server.js';

const HOUR = 3_600_000;
const NS = 'hyperfleet-system';

describe('admin tokens in a Kubernetes Secret (test API server, real client)', () => {
  let server: KubernetesTestServer;
  let n = 0;
  before(async () => {
    server = await startKubernetesTestServer({ namespaces: [NS] });
  });
  after(() => server.close());

  function replicas(name: string) {
    const now = { t: Date.parse('2026-01-01T00:00:00Z') };
    const make = () =>
      new TokenManager({
        storage: secretTokenStorage({ namespace: NS, name, kubeconfigPath: server.kubeconfigPath }),
        lifetimeMs: 24 * HOUR,
        pollMs: 0,
        clock: () => now.t,
      });
    return { now, a: make(), b: make() };
  }

  const secret = (name: string) => server.getObject('secrets', NS, name) as V1Secret | undefined;
  const key = (name: string, k: string) =>
    Buffer.from(secret(name)?.data?.[k] ?? '', 'base64').toString('utf8');

  it('two replicas starting at once create one token (the loser of the create re-reads)', async () => {
    const name = `admin-token-${++n}`;
    const { a, b } = replicas(name);
    await Promise.all([a.start(), b.start()]);
    const token = key(name, ADMIN_TOKEN_KEYS.current);
    assert.match(token, /^[A-Za-z0-9+/]{43}=$/);
    assert.equal(a.check(token), 'current');
    assert.equal(b.check(token), 'current');
    assert.deepEqual(secret(name)?.metadata?.labels?.['managed-by'], 'hyperfleet');
  });

  it('rotation by one replica with resourceVersion; the other loses the race, re-reads and takes the new token', async () => {
    const name = `admin-token-${++n}`;
    const { now, a, b } = replicas(name);
    await a.start();
    await b.start();
    const first = key(name, ADMIN_TOKEN_KEYS.current);
    now.t += 12 * HOUR;
    server.resetCalls();
    await Promise.all([a.refresh(), b.refresh()]);
    const current = key(name, ADMIN_TOKEN_KEYS.current);
    assert.notEqual(current, first);
    assert.equal(
      key(name, ADMIN_TOKEN_KEYS.previous),
      first,
      'rotated once: the previous slot holds the first token',
    );
    assert.equal(a.check(current), 'current');
    assert.equal(b.check(current), 'current');
    assert.equal(b.check(first), 'previous');
    now.t += 12 * HOUR;
    assert.equal(a.check(first), undefined, 'refused once its lifetime is over');
  });

  it('a change made by another replica is seen on the next poll, without restart', async () => {
    const name = `admin-token-${++n}`;
    const { a, b } = replicas(name);
    await a.start();
    await b.start();
    await a.rotateNow();
    const current = key(name, ADMIN_TOKEN_KEYS.current);
    assert.equal(b.check(current), undefined);
    await b.refresh();
    assert.equal(b.check(current), 'current');
  });

  it('never overwrites a Secret it does not manage', async () => {
    const name = `admin-token-${++n}`;
    const kc = new KubeConfig();
    kc.loadFromFile(server.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const at = new Date(Date.parse('2026-01-01T00:00:00Z')).toISOString();
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    await core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name }, data: { token: b64('A'.repeat(43) + '='), 'token-generated-at': b64(at) } },
    });
    const m = new TokenManager({ storage: secretTokenStorage({ namespace: NS, name, core }), pollMs: 0 });
    // The token is old enough to rotate at start: the write is refused, the Secret left as it was.
    await assert.rejects(m.start(), /lacks the label managed-by=hyperfleet/);
    assert.equal(key(name, 'token'), 'A'.repeat(43) + '=');
  });
});
