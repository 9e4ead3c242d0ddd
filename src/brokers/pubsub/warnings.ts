import type { Logger } from '../../observability/logger.js';

let routedTo: Logger | undefined;

/**
 * Routes process warnings into the structured logger, so every line the process writes is JSON. The
 * Google libraries emit some: gcp-metadata's `MetadataLookupWarning` when its metadata server probe
 * fails (https://github.com/googleapis/gcp-metadata/blob/main/src/index.ts, `isAvailable`), and
 * google-gax deprecation notices. Node prints a warning as a plain stderr line from its own
 * `warning` listener, which this replaces. Idempotent: the first logger wins.
 */
export function routeProcessWarnings(logger: Logger): void {
  if (routedTo !== undefined) return;
  routedTo = logger;
  process.removeAllListeners('warning');
  process.on('warning', (warning: Error & { code?: unknown }) => {
    logger.warn({ warning: warning.name, code: warning.code, detail: warning.message }, 'process warning');
  });
}
