import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { readClusterParams, fieldPathsSchema } from '../../src/reconcile/cluster-params.js';
import { validateAdapterConfig } from '../../src/adapter/config.js';
import { PullSecretError } from '../../src/errors/index.js';
import { deriveClusterNames } from '../../src/pullsecret/cluster-names.js';
import { validatePullSecret } from '../../src/pullsecret/validate.js';

// The adapter's other parsers of untrusted input: a cluster object from the API (its spec is free-form
// and written by the cluster's owner) and the configuration. Each run returns or throws a classified
// PullSecretError, and no message echoes a credential-shaped value.

const RUNS = { numRuns: 300 };
const MARKER = 'Zq9SECRET';
const secretArb = fc.stringMatching(/^[A-Za-z0-9:+/=._@-]{6,24}$/).map((s) => `${MARKER}${s}`);
const PATHS = fieldPathsSchema.parse({});

function assertClassified(err: unknown, codes: readonly string[]): void {
  assert.ok(err instanceof PullSecretError, `not a PullSecretError: ${String(err)}`);
  assert.ok(codes.includes(err.code), err.code);
  assert.ok(!err.message.includes(MARKER), `message echoes a credential: ${err.message}`);
}

/** A value the cluster's owner controls: the secret, noise, or any JSON. */
const ownerValue = (secret: string) =>
  fc.oneof(
    fc.constant(secret),
    fc.string({ maxLength: 12 }),
    fc.jsonValue({ maxDepth: 3 }),
    fc.constant(undefined),
  );

// Built once: fc.stringMatching compiles its pattern, too slow to repeat inside `chain`.
const idArb = fc.stringMatching(/^[a-z0-9-]{1,70}$/);

const clusterArb = secretArb.chain((secret) =>
  fc.record({
    id: fc.oneof(fc.constant('019466a0-8f8e-7abc-9def-0123456789ab'), idArb, fc.constant(secret)),
    generation: fc.nat(),
    spec: fc.oneof(
      fc.record({
        provider: ownerValue(secret),
        gcp: fc.record({ projectId: ownerValue(secret) }),
        pullSecret: fc.record({
          data: fc.oneof(
            ownerValue(secret),
            fc.constant({
              auths: { [`bot:${secret}@quay.io`]: { auth: Buffer.from(`bot:${secret}`).toString('base64') } },
            }),
          ),
          secretName: ownerValue(secret),
        }),
      }),
      fc.jsonValue({ maxDepth: 4 }),
    ),
  }),
);

test("cluster parameters: any cluster object reads, and the pipeline's checks of it throw only classified errors without an echo", () => {
  fc.assert(
    fc.property(clusterArb, (cluster) => {
      const params = readClusterParams(cluster, PATHS);
      for (const field of ['provider', 'projectId'] as const) assert.equal(typeof params[field], 'string');
      for (const field of ['pullSecret', 'secretName', 'namespace'] as const)
        assert.ok(params[field] === undefined || typeof params[field] === 'string');
      try {
        deriveClusterNames({
          clusterId: cluster.id,
          secretName: params.secretName,
          namespace: params.namespace,
        });
        if (params.pullSecret !== undefined)
          validatePullSecret(params.pullSecret, { maxBytes: 65_536, targetName: 'gcp store' });
      } catch (err) {
        assertClassified(err, ['IDENTIFIER_INVALID', 'PULL_SECRET_INVALID', 'PAYLOAD_TOO_LARGE']);
      }
    }),
    RUNS,
  );
});

/** A configuration like a user's, with the secret or noise in places users get wrong. */
const configArb = secretArb.chain((secret) => {
  const v = () =>
    fc.oneof(
      fc.constant(secret),
      fc.constant(`amqp://bot:${secret}@rabbit:5672`),
      fc.string({ maxLength: 10 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(undefined),
    );
  return fc.record({
    hyperfleetApi: fc.oneof(
      fc.record({ baseUrl: v(), tokenFile: v(), timeoutMs: v() }),
      fc.constant({ baseUrl: 'http://api:8000' }),
    ),
    broker: fc.oneof(
      fc.record({
        type: fc.oneof(fc.constantFrom('embedded', 'rabbitmq', 'googlepubsub'), v()),
        url: v(),
        topic: v(),
        subscriptionId: v(),
      }),
      fc.constant(undefined),
    ),
    store: fc.oneof(
      fc.record({
        type: fc.oneof(fc.constantFrom('local', 'gcp'), v()),
        settings: fc.oneof(fc.record({ endpoint: v(), dir: v(), insecure: v() }), v()),
      }),
      fc.constant(undefined),
    ),
    kubernetes: fc.oneof(
      fc.record({ target: v(), manifestDir: v(), kubeconfig: v() }),
      fc.constant(undefined),
    ),
    execution: fc.oneof(
      fc.record({ mode: v(), concurrency: v(), job: fc.record({ image: v(), namespace: v() }) }),
      fc.constant(undefined),
    ),
    logLevel: v(),
  });
});

test('adapter configuration: any document validates or throws CONFIG_INVALID without echoing a credential', () => {
  fc.assert(
    fc.property(fc.oneof(configArb, fc.jsonValue({ maxDepth: 3 })), (raw) => {
      try {
        validateAdapterConfig(JSON.parse(JSON.stringify(raw ?? null)) as unknown);
      } catch (err) {
        assertClassified(err, ['CONFIG_INVALID', 'CONFIG_MISSING']);
      }
    }),
    RUNS,
  );
});
