import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { validateAdapterConfig } from '../adapter/config.js';
import { DEFAULT_PRECONDITIONS, SHARED_PRECONDITIONS } from './preconditions.js';
import { fieldPathsSchema, readClusterParams } from './cluster-params.js';
import { ProviderRoutes, UNMAPPED_PROVIDER } from './provider-routes.js';

type Cluster = {
  spec: Record<string, unknown>;
  status: { conditions: Array<{ type: string; status: string }> };
};
const fixture = () =>
  JSON.parse(
    readFileSync(new URL('../../test/fixtures/clusters/gcp-cluster.json', import.meta.url), 'utf8'),
  ) as Cluster;
const base = { hyperfleetApi: { baseUrl: 'http://api:8000' }, broker: { type: 'embedded' } };
const KEY = 'projects/customer-prod-12345/locations/global/keyRings/ring/cryptoKeys/pull-secrets';
const paths = fieldPathsSchema.parse({});

/** A gcp provider and an on-premises one on the local store: both stores of this build. */
const twoProviders = () =>
  validateAdapterConfig({
    ...base,
    providers: { gcp: {}, onprem: { store: 'local', settings: { dir: '/data/store' } } },
  });

function problemsOf(providers: unknown): string {
  try {
    validateAdapterConfig({ ...base, providers });
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail('expected a configuration error');
}

describe('providers in the configuration', () => {
  test('without providers the store section serves every cluster, under the seed rules', () => {
    const config = validateAdapterConfig({
      ...base,
      store: { type: 'gcp', settings: { callTimeoutMs: 5000 } },
    });
    assert.deepEqual(Object.keys(config.providers), ['*']);
    assert.equal(config.providers['*']?.store, 'gcp');
    assert.equal(config.providers['*']?.settings, config.store.settings);
    assert.equal(config.providers['*']?.writesPerMinute, undefined);
    assert.deepEqual(config.providers['*']?.fieldPaths.projectId, paths.projectId);
    assert.deepEqual(config.preconditions.rules, DEFAULT_PRECONDITIONS);
  });

  test('an entry is filled from its provider defaults: store, field paths, one rule per scope setting', () => {
    const config = twoProviders();
    const gcp = config.providers.gcp;
    assert.equal(gcp?.store, 'gcp');
    assert.deepEqual(gcp?.fieldPaths, { projectId: paths.projectId, kmsKeyName: ['spec.gcp.kmsKeyName'] });
    assert.deepEqual(
      gcp?.rules.map((r) => [r.name, r.expression]),
      [['project-id', 'params.projectId != ""']],
    );
    assert.deepEqual(config.providers.onprem, {
      store: 'local',
      settings: { dir: '/data/store' },
      writesPerMinute: undefined,
      readsPerMinute: undefined,
      accessesPerMinute: undefined,
      fieldPaths: {},
      rules: [],
    });
    assert.deepEqual(config.preconditions.rules, SHARED_PRECONDITIONS);
  });

  test("the gcp provider's project paths follow preconditions.fieldPaths.projectId; an entry's paths win", () => {
    const config = validateAdapterConfig({
      ...base,
      providers: { gcp: { fieldPaths: { kmsKeyName: ['spec.keys.gcp'] } } },
      preconditions: { fieldPaths: { projectId: ['spec.custom.project'] } },
    });
    assert.deepEqual(config.providers.gcp?.fieldPaths, {
      projectId: ['spec.custom.project'],
      kmsKeyName: ['spec.keys.gcp'],
    });
  });

  test('every mistake is reported at once, by path, never echoing a value', () => {
    const message = problemsOf({
      vault: { store: 'no-such-store' },
      onprem: {},
      gcp: { settings: { projectId: 'my-project-1' }, fieldPaths: { projectId: [] } },
      edge: { store: 'local', fieldPaths: { projectId: ['spec.gcp.projectId'], key: ['spec.key'] } },
      leaky: { store: 'gcp', fieldPaths: { kmsKeyName: ['spec.pullSecret'] } },
    });
    assert.match(
      message,
      /providers\.leaky\.fieldPaths\.kmsKeyName: must not read the pull secret \(spec\.pullSecret\.data\)/,
    );
    assert.match(
      message,
      /providers\.vault\.store: no-such-store is not a store this build knows \(local, gcp/,
    );
    assert.match(
      message,
      /providers\.onprem\.store: required \(there is no default store for provider onprem\)/,
    );
    assert.match(message, /providers\.gcp\.settings\.\(root\): Unrecognized key: "projectId"/);
    assert.match(
      message,
      /providers\.gcp\.fieldPaths\.projectId: required: the GCP project comes from each cluster/,
    );
    assert.match(message, /providers\.edge\.fieldPaths\.projectId: not a setting of the local store/);
    // The local store's key is a secret: a cluster may never give it.
    assert.match(message, /providers\.edge\.fieldPaths\.key: not a setting of the local store/);
    assert.ok(!message.includes('my-project-1'));
    assert.match(problemsOf({}), /providers: must map at least one provider/);
    assert.match(problemsOf({ GCP: {} }), /providers\.GCP: must be a lowercase provider name/);
  });

  test("a provider's rule that does not parse is reported under its provider", () => {
    assert.match(
      problemsOf({ gcp: { rules: [{ name: 'broken', expression: 'params.x ==', message: 'm' }] } }),
      /providers\.gcp\.rules: precondition broken: the CEL expression does not parse/,
    );
  });
});

describe('routing a cluster', () => {
  const config = twoProviders();
  const routes = new ProviderRoutes(config.providers, config.preconditions.rules);
  const route = (cluster: Cluster) => routes.route(cluster, readClusterParams(cluster, paths).provider);
  const verdict = (cluster: Cluster) => {
    const r = route(cluster);
    assert.ok(r);
    return routes.evaluate(r, cluster, readClusterParams(cluster, paths));
  };

  test('a gcp cluster goes to the gcp store with its project and key; the optional key may be absent', () => {
    const cluster = fixture();
    assert.deepEqual(route(cluster), {
      provider: 'gcp',
      store: 'gcp',
      settings: { projectId: 'customer-prod-12345' },
      params: { projectId: 'customer-prod-12345', kmsKeyName: '' },
    });
    cluster.spec.gcp = { projectId: 'p-other-1', kmsKeyName: KEY };
    assert.deepEqual(route(cluster)?.settings, { projectId: 'p-other-1', kmsKeyName: KEY });
    delete cluster.spec.gcp;
    assert.deepEqual(
      route(cluster)?.settings,
      { projectId: 'customer-prod-12345' },
      'spec.platform.gcp.projectID',
    );
    assert.deepEqual(verdict(fixture()), { met: true });
  });

  test('a provider with no entry is not routed; `*` takes any provider; spec.platform.type names it too', () => {
    const cluster = fixture();
    cluster.spec.provider = 'aws';
    assert.equal(route(cluster), undefined);
    assert.match(
      routes.unmappedMessage('aws'),
      /^the cluster provider "aws" is not served by this adapter \(it serves gcp, onprem\)$/,
    );
    assert.match(routes.unmappedMessage(''), /names no provider/);
    assert.equal(UNMAPPED_PROVIDER, 'provider');
    delete cluster.spec.provider;
    cluster.spec.platform = { type: 'onprem' };
    assert.equal(route(cluster)?.store, 'local');
    const any = validateAdapterConfig({ ...base, providers: { gcp: {}, '*': { store: 'local' } } });
    cluster.spec.platform = { type: 'baremetal' };
    assert.equal(
      new ProviderRoutes(any.providers, any.preconditions.rules).route(cluster, 'baremetal')?.provider,
      '*',
    );
  });

  test("each provider has its own rules before the shared ones, and CEL sees the provider's settings", () => {
    const noProject = fixture();
    delete noProject.spec.gcp;
    delete noProject.spec.platform;
    noProject.spec.provider = 'gcp';
    assert.deepEqual(verdict(noProject), {
      met: false,
      name: 'project-id',
      message: 'the cluster spec has no projectId (the GCP project of the GCP Secret Manager store)',
    });
    const onprem = fixture();
    onprem.spec.provider = 'onprem';
    delete onprem.spec.gcp;
    delete onprem.spec.platform;
    assert.deepEqual(verdict(onprem), { met: true }, 'the local store needs no scope');
    delete onprem.spec.pullSecret;
    assert.equal(
      (verdict(onprem) as { name: string }).name,
      'pull-secret-data',
      'the shared rules still apply',
    );

    const keyed = validateAdapterConfig({
      ...base,
      providers: {
        gcp: {
          rules: [
            {
              name: 'cmek',
              expression: 'params.kmsKeyName.startsWith("projects/")',
              message: 'the cluster has no CMEK key',
            },
          ],
        },
      },
    });
    const strict = new ProviderRoutes(keyed.providers, keyed.preconditions.rules);
    const cluster = fixture();
    const r = strict.route(cluster, 'gcp');
    assert.ok(r);
    assert.deepEqual(strict.evaluate(r, cluster, readClusterParams(cluster, paths)), {
      met: false,
      name: 'cmek',
      message: 'the cluster has no CMEK key',
    });
    cluster.spec.gcp = { projectId: 'customer-prod-12345', kmsKeyName: KEY };
    const keyedRoute = strict.route(cluster, 'gcp');
    assert.ok(keyedRoute);
    assert.deepEqual(strict.evaluate(keyedRoute, cluster, readClusterParams(cluster, paths)), { met: true });
  });

  test('a setting written as a number (an AWS account id) is read as its digits; other types are absent', () => {
    const numeric = validateAdapterConfig({
      ...base,
      providers: { gcp: { fieldPaths: { projectId: ['spec.n'] } } },
    });
    const r = new ProviderRoutes(numeric.providers, []);
    assert.deepEqual(r.route({ spec: { n: 123456789012 } }, 'gcp')?.settings, { projectId: '123456789012' });
    assert.deepEqual(r.route({ spec: { n: { nested: true } } }, 'gcp')?.params, {
      projectId: '',
      kmsKeyName: '',
    });
  });
});
