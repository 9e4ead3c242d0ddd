import { PullSecretError } from '../errors/index.js';
import { redactor } from '../pullsecret/redact.js';
import { originalSourceOf } from './bundle-origin.js';

/** What went astray: a promise rejected with no handler, or an exception nobody caught. */
type StrayKind = 'unhandledRejection' | 'uncaughtException';

/** The fields of the one log line written for a stray error (never the error's message text). */
interface StrayReport {
  error_code: 'INTERNAL';
  error: string;
  retryable: false;
  stray: StrayKind;
  /** The thrown value's class name (`Error`, `TypeError`, ...) or its type. */
  cause_name: string;
  /** The thrown value's `code` when it is a short token (`ECONNRESET`, a gRPC status number). */
  cause_code?: string;
  /** The package the error was raised in (`google-auth-library`), or `pull-secret` for our code. */
  cause_origin?: string;
}

interface ProcessGuardOptions {
  /** Writes the line: a structured logger's `error`, or anything with that shape. */
  log: (fields: StrayReport, message: string) => void;
  /**
   * Runs after the line is written. The default keeps the process running after a stray rejection
   * (the adapter: the work that produced it already failed and was reported) and exits 1 after an
   * uncaught exception (the process state is unknown; the platform restarts it).
   */
  onStray?: (kind: StrayKind, error: PullSecretError) => void | Promise<void>;
}

const MESSAGE: Record<StrayKind, string> = {
  unhandledRejection: 'unhandled promise rejection',
  uncaughtException: 'uncaught exception',
};

/** Only short tokens: a `code` holding free text could quote its input. */
const CODE_TOKEN = /^[A-Za-z0-9_.-]{1,40}$/;
/** The package of the innermost stack frame inside node_modules. */
const PACKAGE_FRAME = /node_modules[\\/]((?:@[^\\/\s]+[\\/])?[^\\/\s]+)/;

/**
 * Describes a stray error without quoting its message (its text may come from a parser or an SDK
 * that quotes its input): the class name, a short `code` and the package it came from.
 */
export function describeStray(kind: StrayKind, reason: unknown): StrayReport {
  const report: StrayReport = {
    error_code: 'INTERNAL',
    error: MESSAGE[kind],
    retryable: false,
    stray: kind,
    cause_name: typeof reason,
  };
  if (typeof reason !== 'object' || reason === null) return report;
  const { name, code, stack } = reason as { name?: unknown; code?: unknown; stack?: unknown };
  if (typeof name === 'string' && CODE_TOKEN.test(name)) report.cause_name = name;
  if ((typeof code === 'string' || typeof code === 'number') && CODE_TOKEN.test(String(code)))
    report.cause_code = String(code);
  if (typeof stack === 'string') {
    // The first frame line after the message; the message itself may span lines, so look for "at ".
    const frame = stack.split('\n').find((line) => line.trimStart().startsWith('at '));
    // In a bundle (dist/bundle) every frame is in a bundle file: its source map names the module.
    if (frame !== undefined)
      report.cause_origin =
        (PACKAGE_FRAME.exec(frame) ?? PACKAGE_FRAME.exec(originalSourceOf(frame) ?? ''))?.[1]?.replace(
          '\\',
          '/',
        ) ?? 'pull-secret';
  }
  report.cause_origin &&= redactor.redact(report.cause_origin);
  return report;
}

/** The handler of the installed guard, replaceable while a command runs (see `onStrayError`). */
let strayHandler: ((kind: StrayKind, error: PullSecretError) => void | Promise<void>) | undefined;
let installed = false;

function defaultOnStray(kind: StrayKind): void {
  if (kind === 'uncaughtException') process.exit(1);
}

/**
 * Installs process-wide handlers for `unhandledRejection` and `uncaughtException`: each stray error
 * becomes one classified log line (code INTERNAL, no message text), then the current stray handler
 * decides what happens next (`options.onStray`, replaced by `onStrayError` while a command runs).
 * Node's default (print the raw stack, which may quote credentials, and die) never runs.
 * Returns a function that removes the handlers.
 */
export function installProcessGuard(options: ProcessGuardOptions): () => void {
  strayHandler = options.onStray ?? defaultOnStray;
  installed = true;
  const handle = (kind: StrayKind) => (reason: unknown) => {
    const report = describeStray(kind, reason);
    try {
      options.log(report, 'stray error caught by the process guard');
    } catch {
      // The log line is best effort: the guard itself must never throw.
    }
    const error = new PullSecretError('INTERNAL', MESSAGE[kind], { cause: reason });
    const handler = strayHandler ?? defaultOnStray;
    void Promise.resolve()
      .then(() => handler(kind, error))
      .catch(() => process.exit(1));
  };
  const rejection = handle('unhandledRejection');
  const exception = handle('uncaughtException');
  process.on('unhandledRejection', rejection);
  process.on('uncaughtException', exception);
  return () => {
    process.off('unhandledRejection', rejection);
    process.off('uncaughtException', exception);
    installed = false;
    strayHandler = undefined;
  };
}

/**
 * Replaces what the installed guard does after logging a stray error (the job: write its failure
 * result file and exit 1). Returns a function that puts the previous handler back. Without an
 * installed guard (a library caller, a test) it does nothing.
 */
export function onStrayError(
  handler: (kind: StrayKind, error: PullSecretError) => void | Promise<void>,
): () => void {
  if (!installed) return () => undefined;
  const previous = strayHandler;
  strayHandler = handler;
  return () => {
    if (strayHandler === handler) strayHandler = previous;
  };
}
