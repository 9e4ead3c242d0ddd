import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { redactor } from '../pullsecret/redact.js';
import { createProgress } from './progress.js';

function sink(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns: 80, write: (text: string) => void writes.push(text) } };
}

describe('progress view', () => {
  it('on a terminal: one line redrawn in place, rate-limited, ended by finish', () => {
    let t = 0;
    const { writes, stream } = sink(true);
    const progress = createProgress({ label: 'Clusters settled', total: 200, stream, now: () => t });
    t = 1000;
    progress.update(10);
    t = 1050;
    progress.update(20); // within 100 ms of the last redraw: skipped
    t = 1200;
    progress.update(40);
    t = 2000;
    progress.update(200);
    progress.finish();
    assert.equal(writes.length, 4);
    assert.ok(writes.every((w) => w.startsWith('\r\x1b[2K')));
    assert.equal(writes.filter((w) => w.includes('\n')).length, 1, 'only the final write ends the line');
    assert.match(writes[1] ?? '', /Clusters settled {2}40\/200 {2}20% {2}33\.3\/s {2}1\.2 s$/);
    assert.match(writes[3] ?? '', /200\/200 {2}100% {2}100\.0\/s {2}2\.0 s\n$/);
  });

  it('not on a terminal: plain lines at a bounded rate, and always the final state', () => {
    let t = 0;
    const { writes, stream } = sink(false);
    const progress = createProgress({
      label: 'Creating clusters',
      total: 1000,
      stream,
      now: () => t,
      lineMs: 2000,
    });
    for (let done = 1; done <= 1000; done++) {
      t += 5;
      progress.update(done);
    }
    progress.finish();
    progress.finish();
    assert.ok(writes.length <= 4, `${writes.length} lines for 1000 updates`);
    assert.ok(writes.every((w) => w.endsWith('\n') && !w.includes('\r') && !w.includes('\x1b')));
    assert.match(writes.at(-1) ?? '', /^Creating clusters {2}1000\/1000 {2}100%/);
  });

  it('a finish with a note keeps the count reached (e.g. a timeout)', () => {
    const { writes, stream } = sink(false);
    const progress = createProgress({ label: 'Settled', total: 5, stream, now: () => 0 });
    progress.update(3);
    progress.finish('timed out');
    assert.match(writes.at(-1) ?? '', /Settled {2}3\/5 {2}60% .* {2}timed out\n$/);
  });

  it('on a terminal, a line never wraps (a wrapped line cannot be redrawn); unknown width: no cut', () => {
    for (const [columns, length] of [
      [20, 19],
      [0, 44],
    ] as const) {
      const writes: string[] = [];
      const progress = createProgress({
        label: 'Clusters with a status',
        total: 5,
        stream: { isTTY: true, columns, write: (t: string) => void writes.push(t) },
        now: () => 0,
      });
      progress.update(1);
      assert.equal((writes[0] ?? '').replace('\r\x1b[2K', '').length, length, `columns ${columns}`);
    }
  });

  it('never writes a registered credential', () => {
    redactor.register(['progress-canary-s3cr3t']);
    const { writes, stream } = sink(false);
    const progress = createProgress({ label: 'copying progress-canary-s3cr3t', total: 1, stream });
    progress.finish();
    assert.ok(!writes.join('').includes('progress-canary-s3cr3t'));
  });
});
