// Property tests of the configuration parsers that read untrusted input (a config file, a
// hyperfleet-broker file, the environment): whatever they get, they either return a config or throw
// one classified CONFIG_INVALID error, and never quote a credential-shaped value back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PullSecretError } from '../errors/index.js';
import { adapterEnvLayers } from '../adapter/config-env.js';
import { validateAdapterConfig } from '../adapter/config.js';
import { hyperfleetBrokerDocument, translateHyperfleetBroker } from './hyperfleet-broker.js';

const CANARY = 'hunter2-canary-password';

/** Values that sometimes carry the canary, at any depth. */
const value = fc.oneof(
  fc.constant(CANARY),
  fc.constant(`amqp://user:${CANARY}@host`),
  fc.string(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);
const tree = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    value,
    fc.array(tie('node'), { maxLength: 3 }),
    fc.dictionary(
      fc.constantFrom(
        'broker',
        'type',
        'rabbitmq',
        'googlepubsub',
        'url',
        'project_id',
        'subscriber',
        'parallelism',
        'store',
        'settings',
        'hyperfleetApi',
        'baseUrl',
        'kubernetes',
        'target',
        'x',
      ),
      tie('node'),
      { maxKeys: 4 },
    ),
  ),
})).node;

function checkFailure(err: unknown): void {
  assert.ok(err instanceof PullSecretError, `not classified: ${String(err)}`);
  assert.equal(err.code, 'CONFIG_INVALID');
  assert.ok(!err.message.includes(CANARY), 'a value was echoed');
}

test('validateAdapterConfig returns a config or throws CONFIG_INVALID, never echoing a value', () => {
  fc.assert(
    fc.property(tree, (raw) => {
      try {
        validateAdapterConfig(raw);
      } catch (err) {
        checkFailure(err);
      }
    }),
    { numRuns: 300 },
  );
});

test('the hyperfleet-broker file and environment translate or report problems, never throw, never echo', () => {
  const env = fc.dictionary(
    fc.constantFrom(
      'BROKER_TYPE',
      'BROKER_RABBITMQ_URL',
      'BROKER_GOOGLEPUBSUB_PROJECT_ID',
      'SUBSCRIBER_PARALLELISM',
      'HYPERFLEET_BROKER_TOPIC',
      'SECRET_STORE',
      'SECRET_MANAGER_ENDPOINT',
    ),
    fc.oneof(fc.string(), fc.constant(CANARY)),
    { maxKeys: 4 },
  );
  fc.assert(
    fc.property(tree, tree, env, (file, brokerFile, vars) => {
      const doc = hyperfleetBrokerDocument(brokerFile, vars);
      const problems = doc.ok ? translateHyperfleetBroker(doc.value).problems : doc.problems;
      assert.ok(problems.every((p) => !p.includes(CANARY)));
      const layered = adapterEnvLayers(
        typeof file === 'object' && file !== null && !Array.isArray(file) ? file : {},
        undefined,
        vars,
      );
      assert.ok(layered.problems.every((p) => !p.includes(CANARY)));
      try {
        validateAdapterConfig(layered.raw, layered.problems);
      } catch (err) {
        checkFailure(err);
      }
    }),
    { numRuns: 300 },
  );
});
