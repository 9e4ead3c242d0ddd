/**
 * The entry of the job's bundle (dist/job-bundle/run-job-entry.js, built by `npm run build`): the
 * `pull-secret run-job ...` command line alone, as main.ts runs it (same command, same settings,
 * same process guard, same exit codes), without loading the other commands. The `pull-secret`
 * executable (pull-secret.ts) runs it for `run-job` when the bundle was built.
 */
import { Command, CommanderError } from 'commander';
import { runJobCommand } from './run-job.js';
import { printError, reportFailure } from './output.js';
import { createLogger } from '../observability/logger.js';
import { installProcessGuard } from '../observability/process-guard.js';

/** The `pull-secret` program with `run-job` as its only command, configured as buildProgram() configures it. */
export function buildRunJobProgram(): Command {
  const output = { outputError: (text: string) => printError(text.replace(/^error: /, '').trimEnd()) };
  const program = new Command('pull-secret').description('Lifecycle of image-registry pull secrets for HyperFleet clusters.').showHelpAfterError().exitOverride().configureOutput(output);
  program.addCommand(runJobCommand().exitOverride().showHelpAfterError().configureOutput(output));
  return program;
}

async function main(argv: string[]): Promise<number> {
  try {
    await buildRunJobProgram().parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      const informational = ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(err.code);
      return informational ? 0 : 2;
    }
    return reportFailure(err);
  }
}

const guardLogger = createLogger({ level: 'error' });
installProcessGuard({ log: (fields, message) => guardLogger.error(fields, message) });

process.exitCode = await main(process.argv);
