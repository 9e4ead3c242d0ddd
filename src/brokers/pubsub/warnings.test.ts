import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../observability/logger.js';
import { routeProcessWarnings } from './warnings.js';

test('a process warning (the Google libraries emit MetadataLookupWarning) becomes one JSON log line, not a plain stderr line', async () => {
  const lines: string[] = [];
  const destination = new Writable({
    write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()),
  });
  routeProcessWarnings(createLogger({ destination }));
  routeProcessWarnings(createLogger());
  assert.equal(process.listenerCount('warning'), 1, "Node's own printer is replaced, once");
  process.emitWarning(
    'received unexpected error = connect EHOSTDOWN code = UNKNOWN',
    'MetadataLookupWarning',
  );
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(lines.length, 1);
  const entry = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
  assert.deepEqual(
    [entry.level, entry.message, entry.warning],
    ['warn', 'process warning', 'MetadataLookupWarning'],
  );
});
