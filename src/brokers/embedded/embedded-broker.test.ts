import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../observability/logger.js';
import type { InboundMessage } from '../broker.js';
import { embeddedBrokerConfigSchema } from './config.js';
import { EmbeddedBroker } from './embedded-broker.js';

function captureLogger(): { logger: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level: 'debug',
    destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, lines };
}

function broker(overrides: Record<string, unknown> = {}, logger = captureLogger().logger): EmbeddedBroker {
  return new EmbeddedBroker(
    embeddedBrokerConfigSchema.parse({ type: 'embedded', retryDelayMs: 1, retryMaxDelayMs: 5, ...overrides }),
    { logger },
  );
}

/** A promise plus its resolver. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('EmbeddedBroker', () => {
  it('delivers messages published before and after start, body and attributes untouched', async () => {
    const b = broker();
    await b.publish(Buffer.from('first'), { a: '1' });
    const seen: InboundMessage[] = [];
    const done = deferred();
    await b.start(async (message) => {
      seen.push(message);
      if (seen.length === 2) done.resolve();
      return 'ack';
    });
    assert.equal(b.isReady(), true);
    await b.publish(Buffer.from('not json {'));
    await done.promise;
    assert.deepEqual(
      seen.map((m) => [m.body.toString(), m.attributes, m.deliveryAttempt]),
      [
        ['first', { a: '1' }, 1],
        ['not json {', {}, 1],
      ],
    );
    assert.notEqual(seen[0]?.id, seen[1]?.id);
    await b.stop();
    assert.equal(b.isReady(), false);
  });

  it('never runs more than maxInFlight handlers at once', async () => {
    const b = broker({ maxInFlight: 3 });
    let running = 0;
    let peak = 0;
    let handled = 0;
    const done = deferred();
    await b.start(async () => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
      handled += 1;
      if (handled === 50) done.resolve();
      return 'ack';
    });
    for (let i = 0; i < 50; i++) await b.publish(Buffer.from(String(i)));
    await done.promise;
    assert.equal(peak, 3);
    assert.equal(b.pending, 0);
    await b.stop();
  });

  it('redelivers on retry and on a thrown error with a growing deliveryAttempt, then drops after maxDeliveries', async () => {
    const { logger, lines } = captureLogger();
    const b = broker({ maxDeliveries: 3 }, logger);
    const attempts: number[] = [];
    const done = deferred();
    await b.start(async (message) => {
      attempts.push(message.deliveryAttempt);
      if (message.deliveryAttempt === 3) setImmediate(done.resolve);
      if (message.deliveryAttempt === 2) throw new Error('boom');
      return 'retry';
    });
    await b.publish(Buffer.from('secret-body'));
    await done.promise;
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(attempts, [1, 2, 3]);
    assert.equal(b.pending, 0);
    assert.ok(
      lines.some(
        (l) =>
          l.message === 'broker message dropped after its last delivery attempt' && l.delivery_attempt === 3,
      ),
    );
    assert.ok(!JSON.stringify(lines).includes('secret-body'));
    await b.stop();
  });

  it('drops and logs a rejected message', async () => {
    const { logger, lines } = captureLogger();
    const b = broker({}, logger);
    const done = deferred();
    await b.start(async () => {
      setImmediate(done.resolve);
      return 'reject';
    });
    await b.publish(Buffer.from('secret-body'));
    await done.promise;
    assert.equal(b.pending, 0);
    assert.ok(
      lines.some(
        (l) =>
          l.message === 'broker message rejected; dropped (the embedded broker has no dead-letter queue)',
      ),
    );
    assert.ok(!JSON.stringify(lines).includes('secret-body'));
    await b.stop();
  });

  it('stop waits for in-flight handlers and settles them; queued messages stay for the next start', async () => {
    const b = broker({ maxInFlight: 1 });
    const release = deferred();
    const started = deferred();
    await b.start(async () => {
      started.resolve();
      await release.promise;
      return 'ack';
    });
    await b.publish(Buffer.from('one'));
    await b.publish(Buffer.from('two'));
    await started.promise;
    const stopping = b.stop({ drainMs: 5_000 });
    assert.equal(b.stop(), stopping, 'a second stop returns the same drain');
    release.resolve();
    await stopping;
    assert.equal(b.pending, 1);
    const seen: string[] = [];
    const done = deferred();
    await b.start(async (m) => {
      seen.push(m.body.toString());
      done.resolve();
      return 'ack';
    });
    await done.promise;
    assert.deepEqual(seen, ['two']);
    await b.stop();
  });

  it('aborts handlers when the drain time is over and keeps their messages unacked for redelivery', async () => {
    const b = broker();
    const started = deferred();
    let aborted = false;
    await b.start(async (_message, signal) => {
      started.resolve();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      aborted = true;
      return 'ack';
    });
    await b.publish(Buffer.from('slow'));
    await started.promise;
    await b.stop({ drainMs: 20 });
    assert.equal(aborted, true);
    assert.equal(b.pending, 1, 'the late ack of an abandoned message is ignored');
    const again = deferred<InboundMessage>();
    await b.start(async (m) => {
      again.resolve(m);
      return 'ack';
    });
    const redelivered = await again.promise;
    assert.equal(redelivered.body.toString(), 'slow');
    assert.equal(redelivered.deliveryAttempt, 2);
    await b.stop();
  });

  it('puts messages waiting out a retry delay back in the queue on stop', async () => {
    const b = broker({ retryDelayMs: 60_000, retryMaxDelayMs: 60_000 });
    const first = deferred();
    await b.start(async () => {
      first.resolve();
      return 'retry';
    });
    await b.publish(Buffer.from('later'));
    await first.promise;
    await new Promise((resolve) => setImmediate(resolve));
    await b.stop();
    assert.equal(b.pending, 1);
  });

  it('refuses a second start', async () => {
    const b = broker();
    await b.start(async () => 'ack');
    await assert.rejects(
      b.start(async () => 'ack'),
      { code: 'INTERNAL' },
    );
    await b.stop();
  });
});
