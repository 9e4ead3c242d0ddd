import { Command } from 'commander';
import { hyperfleetVariables } from '../config/hyperfleet-env.js';
import type { AdapterConfig } from '../adapter/config.js';
import { envFor } from '../stores/config-env.js';
import { PROVIDER_DEFAULTS } from '../adapter/config-providers.js';
import { isStoreKind } from '../stores/registry.js';
import { createLogger } from '../observability/logger.js';
import { renderTable } from '../util/table.js';
import { printOut, reportFailure } from './output.js';

/** Every override, its key and who else reads it (the job, or one store only). */
function overridesHelp(): string {
  const rows = Object.entries(envFor('adapter')).map(([name, v]) => {
    const note =
      v.store !== undefined ? ` [${v.store} store]` : v.scope === 'both' ? ' [same for run-job]' : '';
    return [name, `${v.path}${note}`];
  });
  return [
    '',
    'Environment overrides (win over everything else):',
    renderTable(rows, { indent: '  ' }),
    '',
    'HyperFleet conventions (below our variables, above the file; see docs/configuration.md, "Precedence"):',
    ...wrap(hyperfleetVariables().join(', '), 98).map((line) => `  ${line}`),
    '',
    'Providers (providers.<name> in the file maps clusters of a provider to a store; unset: the store',
    'section serves every cluster). Defaults of an entry, store setting <- cluster paths:',
    renderTable(
      Object.entries(PROVIDER_DEFAULTS).map(([name, d]) => {
        const paths = Object.entries(d.fieldPaths).map(
          ([key, p]) => `${key} <- ${p.length > 0 ? p.join(' | ') : 'preconditions.fieldPaths.projectId'}`,
        );
        return [
          name,
          `store ${d.store}${isStoreKind(d.store) ? '' : ' (not in this build)'}; ${paths.join('; ')}`,
        ];
      }),
      { indent: '  ' },
    ),
  ].join('\n');
}

/** The stores of the configuration, for the `validate-config` line. */
function describeStores(config: AdapterConfig): string {
  const routes = Object.entries(config.providers);
  if (routes.length === 1 && routes[0]?.[0] === '*') return `store ${config.store.type}`;
  return `providers ${routes.map(([name, r]) => `${name} (${r.store} store)`).join(', ')}`;
}

/** Splits text at spaces into lines of at most `width` characters. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  return line === '' ? lines : [...lines, line];
}

/** `adapter --config FILE`: the long-running event-driven service. */
export function adapterCommand(): Command {
  return new Command('adapter')
    .description(
      'Run the event-driven adapter: consume cluster events, store and provision pull secrets, report status.',
    )
    .option('-c, --config <file>', 'YAML configuration file (see docs/configuration.md)')
    .addHelpText(
      'after',
      () =>
        `${overridesHelp()}\n\nSIGTERM/SIGINT drain in-flight work, then exit 0. Exit codes: 1 runtime ` +
        `failure, 2 configuration error.`,
    )
    .action(async (options: { config?: string }) => {
      process.exitCode = await runAdapter(options.config);
    });
}

/** `validate-config --config FILE`: the same checks the adapter makes at start. */
export function validateConfigCommand(): Command {
  return new Command('validate-config')
    .description('Check an adapter configuration file (and environment overrides) without starting anything.')
    .option('-c, --config <file>', 'YAML configuration file')
    .action(async (options: { config?: string }) => {
      try {
        const { loadAdapterConfig } = await import('../adapter/config.js');
        const config = await loadAdapterConfig(options.config, process.env);
        printOut(
          `configuration is valid: broker ${config.broker.type}, ${describeStores(config)}, Kubernetes ` +
            `target ${config.kubernetes.target}, execution ${config.execution.mode}`,
        );
        process.exitCode = 0;
      } catch (err) {
        process.exitCode = reportFailure(err);
      }
    });
}

async function runAdapter(configPath: string | undefined): Promise<number> {
  // Loaded here, not at start-up: the job command must not pay for the adapter's dependencies.
  const { loadAdapterConfig } = await import('../adapter/config.js');
  const { startAdapter } = await import('../adapter/service.js');
  let config;
  try {
    config = await loadAdapterConfig(configPath, process.env);
  } catch (err) {
    return reportFailure(err);
  }
  const logger = createLogger({ level: config.logLevel });
  let adapter;
  try {
    adapter = await startAdapter(config, logger);
  } catch (err) {
    return reportFailure(err);
  }
  const running = adapter;
  await new Promise<void>((resolve) => {
    const shutdown = () => {
      process.off('SIGTERM', shutdown).off('SIGINT', shutdown);
      void running.stop().finally(resolve);
    };
    // `on`, not `once`: the local store's lock library re-raises a signal nobody else listens to,
    // which would kill the process mid-drain.
    process.on('SIGTERM', shutdown).on('SIGINT', shutdown);
  });
  return 0;
}
