import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateAdapterConfig } from '../adapter/config.js';
import { adapterEnvLayers } from '../adapter/config-env.js';
import { isLoopbackHost } from '../util/loopback.js';

const BASE = { hyperfleetApi: { baseUrl: 'http://127.0.0.1:8000' }, broker: { type: 'embedded' } };
const withAdmin = (admin: Record<string, unknown>) => validateAdapterConfig({ ...BASE, admin });
const problem = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  return '';
};

describe('admin configuration', () => {
  it('is off by default, with a loopback host and port 8443', () => {
    const config = validateAdapterConfig(BASE);
    assert.equal(config.admin.enabled, false);
    assert.equal(config.admin.protectMetrics, false);
    assert.equal(config.admin.host, '127.0.0.1');
    assert.equal(config.admin.port, 8443);
    assert.equal(config.admin.tokens.lifetimeSeconds, 86_400);
  });

  it('refuses plain HTTP on a host that is not loopback, at validation', () => {
    assert.match(
      problem(() => withAdmin({ enabled: true, host: '0.0.0.0', tokens: { file: 't.json' } })),
      /admin\.tls: plain HTTP is allowed on a loopback host only \(0\.0\.0\.0 is not\)/,
    );
    assert.equal(
      withAdmin({
        enabled: true,
        host: '0.0.0.0',
        tls: { certFile: 'c', keyFile: 'k' },
        tokens: { file: 't.json' },
      }).admin.enabled,
      true,
    );
    assert.equal(withAdmin({ enabled: true, host: '::1', tokens: { file: 't.json' } }).admin.host, '::1');
  });

  it('needs exactly one token storage when the API or the metrics protection is on', () => {
    assert.match(
      problem(() => withAdmin({ enabled: true })),
      /admin\.tokens: set exactly one of/,
    );
    assert.match(
      problem(() => withAdmin({ protectMetrics: true })),
      /admin\.tokens: set exactly one of/,
    );
    assert.match(
      problem(() =>
        withAdmin({ enabled: true, tokens: { file: 'f', secret: { namespace: 'n', name: 'x' } } }),
      ),
      /exactly one/,
    );
    assert.equal(
      withAdmin({
        enabled: true,
        tokens: { secret: { namespace: 'hyperfleet-system', name: 'pullsecret-admin-token' } },
      }).admin.tokens.secret?.name,
      'pullsecret-admin-token',
    );
  });

  it('reads the environment overrides', () => {
    const { raw } = adapterEnvLayers(BASE, undefined, {
      ADMIN_ENABLED: 'true',
      ADMIN_PORT: '9443',
      ADMIN_TOKEN_SECRET_NAMESPACE: 'ns',
      ADMIN_TOKEN_SECRET_NAME: 'tok',
      METRICS_REQUIRE_TOKEN: 'true',
    });
    const config = validateAdapterConfig(raw);
    assert.deepEqual(
      [config.admin.enabled, config.admin.port, config.admin.tokens.secret, config.admin.protectMetrics],
      [true, 9443, { namespace: 'ns', name: 'tok' }, true],
    );
    assert.match(
      problem(() => validateAdapterConfig(adapterEnvLayers(BASE, undefined, { ADMIN_ENABLED: 'yes' }).raw)),
      /admin\.enabled: must be true or false/,
    );
  });

  it('knows the loopback hosts', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost'])
      assert.equal(isLoopbackHost(host), true, host);
    for (const host of ['0.0.0.0', '10.0.0.1', '::', 'example.com', '127.0.0.1.nip.io'])
      assert.equal(isLoopbackHost(host), false, host);
  });
});
