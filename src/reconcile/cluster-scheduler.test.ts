import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClusterScheduler, SUPERSEDED } from './cluster-scheduler.js';

function deferred() {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

test('tasks of one cluster never overlap; a newer waiting event replaces an older one', async () => {
  const scheduler = new ClusterScheduler<string>(4);
  const gate = deferred();
  let active = 0;
  let maxActive = 0;
  const ran: string[] = [];
  const task = (name: string, wait?: Promise<void>) => async () => {
    active++;
    maxActive = Math.max(maxActive, active);
    ran.push(name);
    await wait;
    active--;
    return name;
  };
  const first = scheduler.submit('c1', 1, task('gen1', gate.promise));
  const second = scheduler.submit('c1', 2, task('gen2'));
  const third = scheduler.submit('c1', 3, task('gen3'));
  const stale = scheduler.submit('c1', 2, task('gen2-again'));
  gate.release();
  assert.deepEqual(await Promise.all([first, second, third, stale]), [
    'gen1',
    SUPERSEDED,
    'gen3',
    SUPERSEDED,
  ]);
  assert.deepEqual(ran, ['gen1', 'gen3']);
  assert.equal(maxActive, 1);
  assert.equal(scheduler.size, 0);
});

test('concurrency is bounded across clusters and every cluster gets its turn', async () => {
  const scheduler = new ClusterScheduler<number>(3);
  let active = 0;
  let maxActive = 0;
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      scheduler.submit(`c${i}`, 1, async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise((r) => setImmediate(r));
        active--;
        return i;
      }),
    ),
  );
  assert.deepEqual(
    results,
    Array.from({ length: 20 }, (_, i) => i),
  );
  assert.equal(maxActive, 3);
});

test('a failing task rejects its own promise and the cluster keeps working', async () => {
  const scheduler = new ClusterScheduler<string>(1);
  const failing = scheduler.submit('c1', 1, async () => {
    throw new Error('boom');
  });
  const next = scheduler.submit('c1', 2, async () => 'ok');
  await assert.rejects(failing, /boom/);
  assert.equal(await next, 'ok');
});

test('abortAll signals running tasks', async () => {
  const scheduler = new ClusterScheduler<string>(1);
  const running = scheduler.submit(
    'c1',
    1,
    (signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve('aborted'))),
  );
  scheduler.abortAll();
  assert.equal(await running, 'aborted');
});

test('a newer generation aborts the running task with SUPERSEDED; the same or an older one does not', async () => {
  const scheduler = new ClusterScheduler<string>(2);
  const reasons: unknown[] = [];
  const gate = deferred();
  const running = scheduler.submit('c1', 2, async (signal) => {
    await gate.promise;
    reasons.push(signal.aborted ? signal.reason : 'running');
    await new Promise<void>((resolve) =>
      signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve()),
    );
    reasons.push(signal.reason);
    return 'gen2';
  });
  const same = scheduler.submit('c1', 2, async () => 'gen2-again');
  gate.release();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(reasons, ['running'], 'an event of the same generation leaves the running task alone');
  const newer = scheduler.submit('c1', 3, async (signal) => (signal.aborted ? 'aborted' : 'gen3'));
  assert.deepEqual(await Promise.all([running, same, newer]), ['gen2', SUPERSEDED, 'gen3']);
  assert.deepEqual(reasons, ['running', SUPERSEDED]);
});

test("the caller's signal (the broker's, per message) reaches the task", async () => {
  const scheduler = new ClusterScheduler<string>(1);
  const broker = new AbortController();
  const running = scheduler.submit(
    'c1',
    1,
    (signal) =>
      new Promise((resolve) => signal.addEventListener('abort', () => resolve(String(signal.reason)))),
    broker.signal,
  );
  broker.abort('drain over');
  assert.equal(await running, 'drain over');
});
