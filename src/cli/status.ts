import { Command } from 'commander';
import { toPullSecretError } from '../errors/index.js';
import { printError, printOut, reportFailure } from './output.js';
import { outputOption, render, type OutputFormat } from './output-format.js';

/** Where `status` looks when neither `--api` nor HYPERFLEET_API_URL says: the dev stack's API. */
const DEFAULT_STATUS_API = 'http://127.0.0.1:8000';

interface StatusOptions {
  api: string;
  tokenFile?: string;
  caFile?: string;
  output: OutputFormat;
  adapter: string;
}

/** `status [--api URL] [-o table|wide|json|yaml]`: the pull secret status of every cluster. */
export function statusCommand(): Command {
  return new Command('status')
    .description(
      "Show every cluster's pull secret status: generation, Applied/Available/Health with reasons, " +
        'secret version, Kubernetes Secret.',
    )
    .option(
      '--api <url>',
      'HyperFleet API (the dev stand-in or a real one); env HYPERFLEET_API_URL',
      process.env.HYPERFLEET_API_URL ?? DEFAULT_STATUS_API,
    )
    .option(
      '--token-file <file>',
      'bearer token file; env HYPERFLEET_API_TOKEN_FILE',
      process.env.HYPERFLEET_API_TOKEN_FILE,
    )
    .option(
      '--ca-file <file>',
      'PEM CA file for an https API with a private CA; env HYPERFLEET_API_CA_FILE',
      process.env.HYPERFLEET_API_CA_FILE,
    )
    .addOption(outputOption())
    .option('--adapter <name>', 'adapter whose status is shown', 'pullsecret')
    .addHelpText(
      'after',
      '\nExit codes: 0 shown, 1 the API could not be read, 2 usage or configuration error.',
    )
    .action(async (options: StatusOptions) => {
      process.exitCode = await runStatus(options);
    });
}

async function runStatus(options: StatusOptions): Promise<number> {
  try {
    // Loaded here, not at start-up: other commands must not pay for the status view.
    const { readStatusRows } = await import('../status-view/read-statuses.js');
    const { formatStatusTable } = await import('../status-view/status-table.js');
    const rows = await readStatusRows({
      apiUrl: options.api,
      tokenFile: options.tokenFile,
      caFile: options.caFile,
      adapter: options.adapter,
    });
    printOut(await render(options.output, { clusters: rows }, (wide) => formatStatusTable(rows, { wide })));
    return 0;
  } catch (err) {
    const code = reportFailure(err);
    if (toPullSecretError(err).code === 'API_UNAVAILABLE' && options.api === DEFAULT_STATUS_API) {
      printError(
        'is the dev stack running? Start it with `pull-secret dev`, or point --api at another HyperFleet API',
      );
    }
    return code;
  }
}
