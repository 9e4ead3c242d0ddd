import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PullSecretError } from '../errors/index.js';
import { assertClusterId } from '../pullsecret/identifiers.js';
import { decodeClusterEvent, decodeEvent, MAX_EVENT_BYTES } from './cluster-event.js';

function fixture(name: string): Record<string, unknown> {
  const url = new URL(`../../test/fixtures/events/${name}`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as Record<string, unknown>;
}

const reconcile = fixture('cluster-reconcile.json');
const seedCreate = fixture('cluster-create-seed.json');

function encode(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

function withData(base: Record<string, unknown>, data: unknown): Record<string, unknown> {
  return { ...base, data };
}

/** Asserts EVENT_INVALID whose message matches `pattern` and does not contain `secret`. */
function assertInvalid(body: Buffer, pattern: RegExp, secret?: string): void {
  assert.throws(
    () => decodeClusterEvent(body),
    (err: unknown) => {
      assert.ok(err instanceof PullSecretError);
      assert.equal(err.code, 'EVENT_INVALID');
      assert.equal(err.retryable, false);
      assert.match(err.message, pattern);
      if (secret !== undefined)
        assert.ok(!err.message.includes(secret), `message quotes the body: ${err.message}`);
      return true;
    },
  );
}

describe('decodeClusterEvent', () => {
  it('decodes the Sentinel reconcile event', () => {
    const event = decodeClusterEvent(encode(reconcile));
    assert.deepEqual(event, {
      eventId: '0198c0de-5a1e-7c3b-9f00-00000000a001',
      type: 'com.redhat.hyperfleet.cluster.reconcile',
      source: 'hyperfleet-sentinel',
      clusterId: '019466a0-8f8e-7abc-9def-0123456789ab',
      generation: 2,
      href: '/api/hyperfleet/v1/clusters/019466a0-8f8e-7abc-9def-0123456789ab',
    });
    assert.ok(Object.isFrozen(event));
    assert.equal('time' in event, false, 'no invented time when the event has none');
  });

  it('decodes the seed cluster.create event (clusterId) with its time', () => {
    const event = decodeClusterEvent(encode(seedCreate));
    assert.equal(event.type, 'cluster.create');
    assert.equal(event.clusterId, 'cls-abc123');
    assert.equal(event.generation, 1);
    assert.equal(event.time, '2025-11-13T10:30:45Z');
    assert.equal(event.href, undefined);
  });

  it('accepts cluster.update with data.id and without generation', () => {
    const event = decodeClusterEvent(
      encode({ ...seedCreate, type: 'cluster.update', data: { id: 'cls-x', provider: 'gcp' } }),
    );
    assert.equal(event.clusterId, 'cls-x');
    assert.equal('generation' in event, false);
  });

  it('accepts extension attributes the SDK allows', () => {
    assert.equal(
      decodeClusterEvent(encode({ ...reconcile, traceparent: '00-abc' })).clusterId,
      '019466a0-8f8e-7abc-9def-0123456789ab',
    );
  });

  it('leaves the cluster id format to the pipeline', () => {
    assert.equal(
      decodeClusterEvent(encode(withData(reconcile, { id: 'Not_A_DNS_Label' }))).clusterId,
      'Not_A_DNS_Label',
    );
  });

  it('rejects a body over 256 KiB before parsing it', () => {
    assertInvalid(Buffer.alloc(MAX_EVENT_BYTES + 1, 0x7b), /over the 262144-byte limit/);
  });

  it('rejects a body that is not JSON without quoting it', () => {
    assertInvalid(Buffer.from('{"specversion": "1.0", canary-token'), /not valid JSON/, 'canary-token');
  });

  it('rejects JSON that is not an object', () => {
    assertInvalid(encode(['canary-token']), /not a JSON object/, 'canary-token');
    assertInvalid(Buffer.from('null'), /not a JSON object/);
    assertInvalid(Buffer.from('"canary-token"'), /not a JSON object/, 'canary-token');
  });

  it('rejects a missing or unsupported specversion', () => {
    const { specversion: _omitted, ...noVersion } = reconcile;
    assertInvalid(encode(noVersion), /"specversion" is missing/);
    assertInvalid(encode({ ...reconcile, specversion: '0.3' }), /"specversion" must be "1.0"/);
  });

  for (const name of ['id', 'source', 'type']) {
    it(`rejects a missing, empty or non-string ${name}`, () => {
      const { [name]: _omitted, ...without } = reconcile;
      assertInvalid(encode(without), new RegExp(`"${name}" is missing`));
      assertInvalid(
        encode({ ...reconcile, [name]: '' }),
        new RegExp(`"${name}" is missing or not a non-empty string`),
      );
      assertInvalid(
        encode({ ...reconcile, [name]: 42 }),
        new RegExp(`"${name}" is missing or not a non-empty string`),
      );
    });
  }

  it('rejects what the CloudEvents SDK refuses, naming the attribute not its value', () => {
    assertInvalid(
      encode({ ...reconcile, time: 'canary-token' }),
      /not a valid CloudEvent 1.0: invalid attribute "time"/,
      'canary-token',
    );
    assertInvalid(
      encode({ ...reconcile, Bad_Name: 'canary-token' }),
      /not a valid CloudEvent 1.0/,
      'canary-token',
    );
    assertInvalid(encode({ ...reconcile, datacontenttype: 5 }), /invalid attribute "datacontenttype"/);
  });

  it('rejects an unknown type, quoting it only in its reverse-DNS form', () => {
    assertInvalid(encode({ ...reconcile, type: 'com.example.other' }), /unknown type "com\.example\.other"/);
    assertInvalid(
      encode({ ...reconcile, type: 'com.example.other\nforged' }),
      /unknown type \(24 characters, sha256 [0-9a-f]{8}…\)/,
    );
  });

  it('never quotes a credential sent as an event id or a cluster id', () => {
    assertInvalid(
      encode({ ...reconcile, id: 'pullbot:s3cr3t-canary-7Q2v', data: { generation: 1 } }),
      /^event \(26 characters, sha256 [0-9a-f]{8}…\): data\.id/,
      's3cr3t',
    );
    const valid = decodeClusterEvent(encode({ ...reconcile, id: 'pullbot:s3cr3t-canary-7Q2v' }));
    assert.match(valid.eventId, /^sha256:[0-9a-f]{16}$/, 'the id is logged, so it is replaced by a hash');
    const decoded = decodeClusterEvent(encode({ ...reconcile, data: { id: 'pullbot:s3cr3t-canary-7Q2v' } }));
    assert.throws(
      () => assertClusterId(decoded.clusterId),
      (err: Error) =>
        /invalid cluster id \(character 8 ":", 26 characters, sha256 [0-9a-f]{8}…\)/.test(err.message) &&
        !err.message.includes('s3cr3t'),
    );
  });

  it('refuses duplicate attributes and deep nesting: readers could disagree, or run out of stack', () => {
    const body = JSON.stringify(reconcile).replace('"data":{', '"data":{"id":"other-cluster",');
    assertInvalid(Buffer.from(body), /event body refused: duplicate key in "data"/);
    assertInvalid(
      Buffer.from(JSON.stringify(reconcile).replace(/}$/, `,"x":${'['.repeat(5000)}${']'.repeat(5000)}}`)),
      /nested deeper than 64 levels/,
    );
  });

  it('rejects missing or non-object data', () => {
    const { data: _omitted, ...noData } = reconcile;
    assertInvalid(encode(noData), /"data" is missing or not a JSON object/);
    assertInvalid(encode(withData(reconcile, 'canary-token')), /"data" is missing/, 'canary-token');
    assertInvalid(encode(withData(reconcile, [1])), /"data" is missing/);
  });

  it('rejects a missing, empty, non-string or overlong cluster id', () => {
    assertInvalid(encode(withData(reconcile, { kind: 'Cluster' })), /data\.id \(the cluster id\) is missing/);
    assertInvalid(
      encode(withData(seedCreate, { provider: 'gcp' })),
      /data\.id \(the cluster id\) is missing/,
    );
    assertInvalid(
      encode(withData(seedCreate, { clusterId: 7 })),
      /data\.clusterId \(the cluster id\) must be a non-empty string/,
    );
    assertInvalid(encode(withData(reconcile, { id: '' })), /must be a non-empty string/);
    assertInvalid(encode(withData(reconcile, { id: 'a'.repeat(257) })), /longer than 256 characters/);
  });

  it('rejects a generation that is not a non-negative integer', () => {
    for (const generation of [-1, 1.5, '2', null, 2 ** 60]) {
      assertInvalid(
        encode(withData(reconcile, { id: 'cls-a', generation })),
        /data\.generation must be a non-negative integer/,
      );
    }
    assert.equal(
      decodeClusterEvent(encode(withData(reconcile, { id: 'cls-a', generation: 0 }))).generation,
      0,
    );
  });

  it('rejects a non-string href', () => {
    assertInvalid(encode(withData(reconcile, { id: 'cls-a', href: 5 })), /data\.href must be a string/);
  });
});

describe('decodeEvent: the Sentinel reconcile type in its published spellings', () => {
  const clusterId = (reconcile.data as { id: string }).id;

  it('the kind in any case, singular or plural, with or without the .v1 suffix, is a reconcile', () => {
    // Sentinel builds `com.redhat.hyperfleet.{kind}.reconcile`; HyperFleet's docs and scripts show `.v1`.
    for (const type of [
      'com.redhat.hyperfleet.Cluster.reconcile',
      'com.redhat.hyperfleet.clusters.reconcile',
      'com.redhat.hyperfleet.cluster.reconcile.v1',
    ]) {
      const decoded = decodeClusterEvent(encode({ ...reconcile, type }));
      assert.equal(decoded.type, 'com.redhat.hyperfleet.cluster.reconcile', type);
      assert.equal(decoded.clusterId, clusterId, type);
    }
  });

  it('a reconcile of another kind, without data.kind, is another kind of resource', () => {
    const data = { ...(reconcile.data as Record<string, unknown>) };
    delete data.kind;
    const event = { ...reconcile, type: 'com.redhat.hyperfleet.NodePool.reconcile.v1', data };
    assert.deepEqual(decodeEvent(encode(event)), { other: { eventId: reconcile.id, kind: 'NodePool' } });
  });

  it('other versions and near misses stay unknown types', () => {
    for (const type of [
      'com.redhat.hyperfleet.cluster.reconcile.v2',
      'com.redhat.hyperfleet.cluster.reconciled',
      'com.redhat.hyperfleet..reconcile',
    ])
      assertInvalid(encode({ ...reconcile, type }), /unknown type/);
  });
});

describe('decodeEvent: the kind of resource', () => {
  const nodePool = {
    ...reconcile,
    data: { ...(reconcile.data as Record<string, unknown>), kind: 'NodePool' },
  };

  it('an event whose data.kind is not Cluster is another kind of resource, whatever its type', () => {
    assert.deepEqual(decodeEvent(encode(nodePool)), { other: { eventId: reconcile.id, kind: 'NodePool' } });
    const typed = { ...nodePool, type: 'com.redhat.hyperfleet.NodePool.reconcile' };
    assert.deepEqual(decodeEvent(encode(typed)), { other: { eventId: reconcile.id, kind: 'NodePool' } });
    // A kind that is not a kind name is not logged as it is (a body is untrusted).
    const odd = {
      ...reconcile,
      data: { ...(reconcile.data as Record<string, unknown>), kind: 'user:pa ss' },
    };
    assert.deepEqual(decodeEvent(encode(odd)), { other: { eventId: reconcile.id } });
    assertInvalid(encode(nodePool), /is about another kind of resource than a cluster/);
  });

  it('kind Cluster (any case) or no kind at all is a cluster event; a kind that is not a string is invalid', () => {
    const clusterId = (reconcile.data as { id: string }).id;
    for (const kind of ['Cluster', 'cluster', undefined]) {
      const event = { ...reconcile, data: { ...(reconcile.data as Record<string, unknown>), kind } };
      const decoded = decodeEvent(encode(event));
      assert.ok('cluster' in decoded, String(kind));
      assert.equal(decoded.cluster.clusterId, clusterId);
    }
    assert.ok('cluster' in decodeEvent(encode(seedCreate)));
    const numeric = { ...reconcile, data: { ...(reconcile.data as Record<string, unknown>), kind: 7 } };
    assert.throws(() => decodeEvent(encode(numeric)), /data\.kind must be a string/);
  });
});
