import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PullSecretError } from '../errors/index.js';
import { deriveClusterNames } from '../pullsecret/cluster-names.js';
import { decodeClusterEvent } from './cluster-event.js';

// CloudEvent decoding takes bodies from the broker, which anyone who can publish controls: every body
// decodes to a frozen event or throws EVENT_INVALID, and no message echoes a credential placed in
// any attribute, including `id` and `data.id`.

const RUNS = { numRuns: 300 };
const secretArb = fc.stringMatching(/^[A-Za-z0-9:+/=._@-]{6,24}$/).map((s) => `Zq9SECRET${s}`);

const attributeArb = (secret: string) =>
  fc.oneof(
    fc.constant(secret),
    fc.string({ maxLength: 12 }),
    fc.jsonValue({ maxDepth: 2 }),
    fc.constant(undefined),
  );

/** A CloudEvent-like object with the secret (or noise) in the attributes an attacker controls. */
const eventArb = secretArb.chain((secret) =>
  fc
    .record({
      specversion: fc.oneof(fc.constant('1.0'), attributeArb(secret)),
      id: fc.oneof(fc.constant('0198c0de-5a1e-7c3b-9f00-00000000a001'), attributeArb(secret)),
      source: fc.oneof(fc.constant('hyperfleet-sentinel'), attributeArb(secret)),
      type: fc.oneof(
        fc.constantFrom('com.redhat.hyperfleet.cluster.reconcile', 'cluster.create', 'cluster.update'),
        attributeArb(secret),
      ),
      time: fc.oneof(fc.constant(undefined), attributeArb(secret)),
      data: fc.oneof(
        fc.record({
          id: fc.oneof(fc.constant('019466a0-8f8e-7abc-9def-0123456789ab'), attributeArb(secret)),
          clusterId: fc.oneof(fc.constant(undefined), attributeArb(secret)),
          generation: fc.oneof(fc.nat(), attributeArb(secret)),
          href: fc.oneof(fc.constant(undefined), attributeArb(secret)),
        }),
        attributeArb(secret),
      ),
      extension: fc.option(fc.tuple(fc.string({ maxLength: 10 }), attributeArb(secret)), { nil: undefined }),
    })
    .map(({ extension, ...event }) => {
      const body: Record<string, unknown> = { ...event };
      if (extension !== undefined) body[extension[0]] = extension[1];
      return { secret, body: Buffer.from(JSON.stringify(body)) };
    }),
);

function assertSafe(err: unknown, code: string): void {
  assert.ok(err instanceof PullSecretError, `not a PullSecretError: ${String(err)}`);
  assert.equal(err.code, code);
  assert.ok(!err.message.includes('Zq9SECRET'), `message echoes the secret: ${err.message}`);
}

test('any event-shaped body decodes (frozen) or throws EVENT_INVALID without echoing a credential', () => {
  fc.assert(
    fc.property(eventArb, ({ body }) => {
      let event;
      try {
        event = decodeClusterEvent(body);
      } catch (err) {
        assertSafe(err, 'EVENT_INVALID');
        return;
      }
      assert.ok(Object.isFrozen(event));
      // The pipeline's next step: the cluster id's names, also refused without an echo.
      try {
        deriveClusterNames({ clusterId: event.clusterId });
      } catch (err) {
        assertSafe(err, 'IDENTIFIER_INVALID');
      }
    }),
    RUNS,
  );
});

test('arbitrary bytes only ever throw EVENT_INVALID', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
        fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? '')),
      ),
      (body) => {
        try {
          decodeClusterEvent(body);
        } catch (err) {
          assert.ok(err instanceof PullSecretError && err.code === 'EVENT_INVALID', String(err));
        }
      },
    ),
    RUNS,
  );
});
