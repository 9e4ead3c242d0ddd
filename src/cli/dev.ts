import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { parseDuration } from '../util/duration.js';
import { printError, printOut, reportFailure } from './output.js';

type DurationOption = 'pollInterval' | 'debounce' | 'maxAge' | 'timeout';

interface DevOptions extends Record<DurationOption, string> {
  dataDir?: string;
  port?: number;
  healthPort?: number;
  metricsPort?: number;
  adminPort?: number;
  demo: boolean;
  demoClusters: number;
  exitWhenSettled: boolean;
  logFile?: string;
  logLevel: string;
}

function port(value: string): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= 0 && n <= 65_535)) throw new InvalidArgumentError('must be a port number (0 picks a free one)');
  return n;
}

function count(value: string): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= 100_000)) throw new InvalidArgumentError('must be a whole number from 1 to 100000');
  return n;
}

/**
 * The dev stack's modules, loaded only when `dev` runs: `run-job` must not pay for the whole stack, and
 * a production install (the image, `npm ci --omit=dev`) has neither `dist/dev` nor its dependencies.
 */
async function loadDevStack() {
  const [stack, logger, text, dataDir, demo] = await Promise.all([
    import('../dev/stack.js'),
    import('../dev/dev-logger.js'),
    import('../dev/dev-text.js'),
    import('../dev/data-dir.js'),
    import('../dev/demo.js'),
  ]);
  return { ...stack, ...logger, ...text, ...dataDir, ...demo };
}
type DevStackModules = Awaited<ReturnType<typeof loadDevStack>>;

/** The package root, to name a missing module by its path in the package, not the machine's. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * What is missing when loading the dev stack failed for want of a module (a package such as `ajv`, or
 * a file of `dist/dev`); undefined for any other failure.
 */
function missingDevModule(err: unknown): string | undefined {
  if ((err as NodeJS.ErrnoException | undefined)?.code !== 'ERR_MODULE_NOT_FOUND') return undefined;
  const specifier = /Cannot find (?:package|module) '([^']+)'/.exec((err as Error).message)?.[1];
  if (specifier === undefined) return 'a module';
  return specifier.startsWith('/') || specifier.startsWith('file:')
    ? relative(PACKAGE_ROOT, specifier.startsWith('file:') ? fileURLToPath(specifier) : specifier)
    : specifier;
}

/** Parses durations at the edge. */
function durations(options: Record<DurationOption, string>): Record<DurationOption, number> {
  const out = {} as Record<DurationOption, number>;
  for (const key of ['pollInterval', 'debounce', 'maxAge', 'timeout'] as const) {
    const ms = parseDuration(options[key]);
    if (ms === undefined || ms <= 0)
      throw new InvalidArgumentError(
        `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} must be a duration such as 500ms, 10s, 30m`,
      );
    out[key] = ms;
  }
  return out;
}

/** `dev`: the whole system on one machine (API stand-in, Sentinel, embedded broker, adapter). */
export function devCommand(): Command {
  return (
    new Command('dev')
      .description(
        'Run the whole system on one machine: HyperFleet API stand-in, Sentinel, embedded broker and ' +
          'adapter (local store, manifests).',
      )
      // The default (DEFAULT_DEV_DATA_DIR) is applied once the dev stack is loaded, not at start-up.
      .option('--data-dir <dir>', 'API state, secret store, manifests and logs (default .pull-secret/dev)')
      .option('--port <n>', 'HyperFleet API port (default 8000; 0 picks a free one)', port)
      .option('--health-port <n>', 'adapter /healthz and /readyz port (default 8080)', port)
      .option('--metrics-port <n>', 'adapter /metrics port (default 9090)', port)
      .option('--admin-port <n>', 'admin API port (default 8443)', port)
      .option('--poll-interval <duration>', 'Sentinel: time between two listings', '1s')
      .option('--debounce <duration>', 'Sentinel: send an unreconciled cluster again after this long', '10s')
      .option(
        '--max-age <duration>',
        'Sentinel: send a reconciled cluster again (resync) after this long',
        '30m',
      )
      .option('--demo', 'start from an empty data directory and create sample clusters', false)
      .option('--demo-clusters <n>', 'valid sample clusters (besides one invalid and one skipped)', count, 3)
      .option(
        '--exit-when-settled',
        'with --demo: print the summary and exit once every sample cluster has a status (ports default to 0)',
        false,
      )
      .option('--timeout <duration>', 'with --exit-when-settled: give up (exit 1) after this long', '2m')
      .option('--log-file <file>', 'JSON log lines go here; - for stdout (default <data-dir>/dev.log)')
      .option('--log-level <level>', 'debug, info, warn or error', 'info')
      .addHelpText(
        'after',
        '\nCtrl+C stops the stack (in-flight work drains first). Exit codes: 0 done, 1 runtime failure ' +
          'or not settled in time, 2 usage error or no dev stack in this installation (it needs the ' +
          'development dependencies: a source checkout after npm ci).',
      )
      .action(async (options: DevOptions) => {
        process.exitCode = await runDev(options);
      })
  );
}

async function runDev(options: DevOptions): Promise<number> {
  if (options.exitWhenSettled && !options.demo) {
    printError('--exit-when-settled needs --demo');
    return 2;
  }
  if (!['debug', 'info', 'warn', 'error'].includes(options.logLevel)) {
    printError('--log-level must be debug, info, warn or error');
    return 2;
  }
  let dev: DevStackModules;
  try {
    dev = await loadDevStack();
  } catch (err) {
    const missing = missingDevModule(err);
    if (missing === undefined) throw err;
    printError(
      `the dev stack is not part of this installation (${missing} is missing): run it from a source ` +
        `checkout after npm ci (npm start)`,
    );
    return 2;
  }
  const {
    startDevStack,
    createDevLogger,
    describeStack,
    nextSteps,
    devPaths,
    prepareDataDir,
    runDemo,
    demoSummary,
    DEFAULT_DEV_DATA_DIR,
  } = dev;
  const dataDir = options.dataDir ?? DEFAULT_DEV_DATA_DIR;
  let times;
  try {
    times = durations(options);
  } catch (err) {
    printError((err as Error).message);
    return 2;
  }
  // A stack that exits by itself serves nobody afterwards: free ports avoid clashing with a running one.
  const fallbackPort = options.exitWhenSettled ? 0 : undefined;
  const logTarget = options.logFile ?? devPaths(dataDir).log;
  let stack;
  try {
    // Cleared (for the demo) before the log file is opened in it.
    await prepareDataDir(dataDir, { fresh: options.demo });
    const logger = createDevLogger(logTarget, options.logLevel);
    stack = await startDevStack({
      dataDir,
      ports: {
        api: options.port ?? fallbackPort,
        health: options.healthPort ?? fallbackPort,
        metrics: options.metricsPort ?? fallbackPort,
        admin: options.adminPort ?? fallbackPort,
      },
      sentinel: { pollIntervalMs: times.pollInterval, debounceMs: times.debounce, maxAgeMs: times.maxAge },
      accountService: true,
      logger,
    });
  } catch (err) {
    return reportFailure(err);
  }
  const logs = logTarget === '-' ? 'stdout' : logTarget;
  // From here on Ctrl+C (or SIGTERM) stops the stack gracefully, also in the middle of the demo.
  // `on`, not `once`: the store's lock library re-raises a signal when it finds no other listener,
  // and a `once` listener is already gone when it looks.
  const interrupted = new AbortController();
  const interrupt = () => interrupted.abort();
  process.on('SIGTERM', interrupt).on('SIGINT', interrupt);
  try {
    printOut(describeStack(stack, logs));
    let code = 0;
    if (options.demo) {
      try {
        const result = await runDemo(stack, {
          validClusters: options.demoClusters,
          timeoutMs: times.timeout,
          say: (text) => printOut(`\n${text}`),
          signal: interrupted.signal,
        });
        printOut(`\n${demoSummary(stack, result, logs, { exiting: options.exitWhenSettled })}`);
        if (!result.settled) {
          const pending = `${result.pending.slice(0, 5).join(', ')}${result.pending.length > 5 ? ', …' : ''}`;
          printError(
            interrupted.signal.aborted
              ? 'interrupted before every sample cluster had a status'
              : `not every sample cluster has a status after ${options.timeout}: ${pending}; see ${logs}`,
          );
          code = 1;
        }
      } catch (err) {
        code = reportFailure(err);
      }
    } else {
      printOut(
        `\n${nextSteps({ apiUrl: stack.urls.api, apiBase: stack.urls.apiBase, adminUrl: stack.urls.admin, adminTokens: stack.paths.adminTokens })}\n`,
      );
    }
    if (!options.exitWhenSettled && !interrupted.signal.aborted) {
      printOut('The stack is running. Ctrl+C stops it.');
      await new Promise((resolve) => interrupted.signal.addEventListener('abort', resolve, { once: true }));
    }
    return code;
  } finally {
    process.off('SIGTERM', interrupt).off('SIGINT', interrupt);
    await stack.stop();
  }
}
