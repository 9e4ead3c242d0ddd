import { redactor } from '../pullsecret/redact.js';

/** Where progress goes: a stream, told apart by `isTTY`. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

interface ProgressOptions {
  /** What is being counted, e.g. `Clusters with a status`. Never put credentials here. */
  label: string;
  total: number;
  /** Default: stderr, so progress never mixes with a command's output on stdout. */
  stream?: ProgressStream;
  /** On a terminal: at most one redraw per this many ms (default 100). */
  redrawMs?: number;
  /** Not on a terminal: at most one line per this many ms (default 2 000), plus the final one. */
  lineMs?: number;
  now?: () => number;
}

/** A progress view for one piece of bulk work. */
interface Progress {
  /** Reports `done` out of the total; cheap to call often (output is rate-limited). */
  update(done: number): void;
  /** Writes the last reported state (always), with an optional note, and ends the line. Later calls do nothing. */
  finish(note?: string): void;
}

const CLEAR_LINE = '\r\x1b[2K';

/**
 * Progress for bulk work (the demo with many clusters, benchmarks). On a terminal: one line redrawn
 * in place (`label  done/total  pct  rate/s  elapsed`); elsewhere (CI logs, pipes): plain lines at a
 * bounded rate, so a log never fills with thousands of updates. Text passes through the process
 * redactor, and only counts and the caller's label are written.
 */
export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  const now = options.now ?? (() => performance.now());
  const started = now();
  const minGap = tty ? (options.redrawMs ?? 100) : (options.lineMs ?? 2_000);
  let lastWrite = -Infinity;
  let lastWritten = -1;
  let current = 0;
  let finished = false;

  const render = (done: number, note?: string): string => {
    const elapsedS = (now() - started) / 1000;
    const total = Math.max(options.total, 0);
    const pct = total === 0 ? 100 : Math.floor((Math.min(done, total) / total) * 100);
    // Over a fraction of a second a rate says nothing (and work done before the start inflates it).
    const rate = elapsedS >= 0.5 ? `${(done / elapsedS).toFixed(1)}/s` : '-/s';
    const text =
      `${options.label}  ${done}/${total}  ${pct}%  ${rate}  ${elapsedS.toFixed(1)} ` +
      `s${note === undefined ? '' : `  ${note}`}`;
    // A line longer than the terminal wraps, and `\r` would then redraw only its last part.
    const columns = stream.columns ?? 0;
    return tty && columns > 1 && text.length >= columns ? text.slice(0, columns - 1) : text;
  };
  const write = (text: string): void => {
    stream.write(redactor.redact(text));
  };

  return {
    update(done) {
      current = done;
      if (finished || done === lastWritten) return;
      const t = now();
      if (t - lastWrite < minGap) return;
      lastWrite = t;
      lastWritten = done;
      write(tty ? `${CLEAR_LINE}${render(done)}` : `${render(done)}\n`);
    },
    finish(note) {
      if (finished) return;
      finished = true;
      write(`${tty ? CLEAR_LINE : ''}${render(current, note)}\n`);
    },
  };
}
