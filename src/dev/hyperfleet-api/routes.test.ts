import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchRoute } from './routes.js';

const B = '/api/hyperfleet/v1';
const ID = '019466a0-8f8e-7abc-9def-0123456789ab';

describe('routes', () => {
  it('matches the implemented operations with their contract templates', () => {
    assert.deepEqual(
      [
        ['GET', `${B}/clusters?page=2`],
        ['POST', `${B}/clusters`],
        ['GET', `${B}/clusters/${ID}`],
        ['PATCH', `${B}/clusters/${ID}`],
        ['DELETE', `${B}/clusters/${ID}`],
        ['GET', `${B}/clusters/${ID}/statuses`],
        ['PUT', `${B}/clusters/${ID}/statuses`],
      ].map(([m, p]) => matchRoute(m ?? '', p ?? '').route),
      [
        'listClusters',
        'createCluster',
        'getCluster',
        'patchCluster',
        'deleteCluster',
        'listStatuses',
        'putStatus',
      ],
    );
    const put = matchRoute('PUT', `${B}/clusters/${ID}/statuses`);
    assert.equal(put.template, `${B}/clusters/{cluster_id}/statuses`);
    assert.equal(put.clusterId, ID);
    assert.equal(matchRoute('GET', `${B}/clusters?page=2`).query.get('page'), '2');
  });

  it('never resolves dot segments or encoded slashes into another route', () => {
    assert.equal(matchRoute('GET', `${B}/clusters/..`).clusterId, '..');
    assert.equal(matchRoute('GET', `${B}/clusters/../clusters`).refusal?.kind, 'routeNotFound');
    assert.equal(matchRoute('GET', `${B}/clusters/a%2Fb`).clusterId, 'a/b');
    assert.equal(matchRoute('GET', `${B}/clusters/a%2Fb`).route, 'getCluster');
    assert.equal(matchRoute('GET', `${B}/clusters/%E0%A4%A`).clusterId, '%E0%A4%A');
  });

  it('POST on statuses is refused with 405 and a hint', () => {
    const post = matchRoute('POST', `${B}/clusters/${ID}/statuses`);
    assert.equal(post.route, 'unmatched');
    assert.equal(post.refusal?.kind, 'methodNotAllowed');
    assert.deepEqual(post.refusal?.allow, ['GET', 'PUT']);
    assert.match(post.refusal?.detail ?? '', /PUT/);
  });

  it('contract routes the stand-in lacks answer 501; unknown paths NTF-000', () => {
    assert.equal(matchRoute('GET', `${B}/clusters/${ID}/nodepools`).refusal?.kind, 'notImplemented');
    assert.equal(matchRoute('POST', `${B}/clusters/${ID}/force-delete`).refusal?.kind, 'notImplemented');
    assert.equal(matchRoute('GET', `${B}/resources`).refusal?.kind, 'notImplemented');
    for (const path of [
      '/',
      '/api/hyperfleet/v2/clusters',
      `${B}/cluster`,
      `${B}/clusters/`,
      `${B}/clusters//statuses`,
      `${B}/clusters/${ID}/statuses/x`,
    ]) {
      assert.equal(matchRoute('GET', path).refusal?.kind, 'routeNotFound', path);
    }
  });
});
