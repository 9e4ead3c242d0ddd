import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import pino from 'pino';
import { createLogger, type Logger } from '../observability/logger.js';

/**
 * The dev stack's logger: the service's JSON lines (redacted like everywhere else), to stdout for
 * `-`, else appended to `file` (created with mode 0600), so the dev command's own output stays readable.
 */
export function createDevLogger(target: string, level: string): Logger {
  if (target === '-') return createLogger({ level });
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  return createLogger({ level, destination: pino.destination({ dest: target, sync: true, mode: 0o600 }) });
}
