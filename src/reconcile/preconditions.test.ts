import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DEFAULT_PRECONDITIONS, defaultPreconditions, Preconditions } from './preconditions.js';
import { fieldPathsSchema, readClusterParams } from './cluster-params.js';

type Cluster = {
  spec: Record<string, unknown>;
  status: { conditions: Array<{ type: string; status: string }> };
};
const fixture = () =>
  JSON.parse(
    readFileSync(new URL('../../test/fixtures/clusters/gcp-cluster.json', import.meta.url), 'utf8'),
  ) as Cluster;
const paths = fieldPathsSchema.parse({});
const check = (cluster: Cluster) =>
  new Preconditions(DEFAULT_PRECONDITIONS).evaluate(cluster, readClusterParams(cluster, paths));

test('the fixture cluster meets the seed defaults', () => {
  assert.deepEqual(check(fixture()), { met: true });
});

test('each default precondition reports its own reason', () => {
  const cases: Array<[string, (c: Cluster) => void]> = [
    [
      'gcp-provider',
      (c) => {
        c.spec.provider = 'aws';
        delete c.spec.platform;
      },
    ],
    [
      'project-id',
      (c) => {
        delete c.spec.gcp;
        delete c.spec.platform;
        c.spec.provider = 'gcp';
      },
    ],
    [
      'pull-secret-data',
      (c) => {
        delete c.spec.pullSecret;
      },
    ],
    [
      'validation-available',
      (c) => {
        c.status.conditions = c.status.conditions.filter((x) => x.type !== 'ValidationSuccessful');
      },
    ],
    [
      'dns-available',
      (c) => {
        c.status.conditions.find((x) => x.type === 'DnsSuccessful')!.status = 'False';
      },
    ],
    [
      'placement-available',
      (c) => {
        c.status.conditions.find((x) => x.type === 'PlacementSuccessful')!.status = 'Unknown';
      },
    ],
  ];
  for (const [name, mutate] of cases) {
    const cluster = fixture();
    mutate(cluster);
    const verdict = check(cluster);
    assert.equal(verdict.met, false, name);
    assert.equal(verdict.met === false && verdict.name, name);
  }
});

test('project id is found under either field path', () => {
  const cluster = fixture();
  delete cluster.spec.gcp;
  assert.equal(readClusterParams(cluster, paths).projectId, 'customer-prod-12345');
  const custom = fieldPathsSchema.parse({ projectId: ['spec.custom.project'] });
  assert.equal(readClusterParams({ spec: { custom: { project: 'p-1' } } }, custom).projectId, 'p-1');
});

test('a broken expression is a configuration error; an evaluation error is a failure, not a skip', () => {
  assert.throws(() => new Preconditions([{ name: 'bad', expression: 'spec.provider ==', message: 'm' }]), {
    code: 'CONFIG_INVALID',
  });
  const missingKey = new Preconditions([
    { name: 'deep', expression: 'spec.nothing.here == "x"', message: 'm' },
  ]);
  assert.throws(() => missingKey.evaluate(fixture(), readClusterParams(fixture(), paths)), {
    code: 'PRECONDITION_ERROR',
  });
  const notBool = new Preconditions([{ name: 'number', expression: '1 + 1', message: 'm' }]);
  assert.throws(() => notBool.evaluate(fixture(), readClusterParams(fixture(), paths)), {
    code: 'PRECONDITION_ERROR',
  });
});

test('a pull secret given as an object is serialized', () => {
  const params = readClusterParams(
    { spec: { pullSecret: { data: { auths: { 'quay.io': { auth: 'x' } } } } } },
    paths,
  );
  assert.equal(params.pullSecret, '{"auths":{"quay.io":{"auth":"x"}}}');
});

test('the pull-secret-data message names the configured pull secret source', () => {
  const cluster = fixture();
  delete cluster.spec.pullSecret;
  const params = readClusterParams(cluster, paths);
  const fromSpec = new Preconditions(defaultPreconditions('spec')).evaluate(cluster, params);
  assert.match(fromSpec.met === false ? fromSpec.message : '', /cluster spec has no pull secret data/);
  const fromAccount = new Preconditions(defaultPreconditions('account-service')).evaluate(cluster, params);
  assert.equal(fromAccount.met === false && fromAccount.name, 'pull-secret-data');
  assert.match(fromAccount.met === false ? fromAccount.message : '', /account-service/);
  assert.doesNotMatch(fromAccount.met === false ? fromAccount.message : '', /spec/);
});
