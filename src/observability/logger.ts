import pino, { type DestinationStream, type Logger } from 'pino';
import { redactor } from '../pullsecret/redact.js';

export type { Logger } from 'pino';

interface LoggerOptions {
  level?: string;
  /** Where lines go; defaults to stdout, written synchronously so no line is lost on exit. */
  destination?: DestinationStream;
}

/**
 * Structured JSON logger: one object a line with `timestamp` (ISO 8601 UTC), `level` (a name),
 * `message`, and the caller's fields. Every line passes through the process redactor, so a registered
 * credential never reaches the output even if some dependency puts it in a message.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      messageKey: 'message',
      base: undefined,
      timestamp: () => `,"timestamp":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
      hooks: { streamWrite: (line) => redactor.redact(line) },
    },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
