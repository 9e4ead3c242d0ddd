#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { inspectCommand } from './inspect.js';
import { adapterCommand, validateConfigCommand } from './adapter.js';
import { runJobCommand } from './run-job.js';
import { printError, reportFailure } from './output.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** Builds the `pull-secret` command tree. Usage errors exit 2 (design §3). */
export function buildProgram(): Command {
  const program = new Command('pull-secret')
    .description('Lifecycle of image-registry pull secrets for HyperFleet clusters.')
    .version(version)
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ outputError: (text) => printError(text.replace(/^error: /, '').trimEnd()) });
  program.addCommand(runJobCommand().exitOverride());
  program.addCommand(inspectCommand().exitOverride());
  program.addCommand(adapterCommand().exitOverride());
  program.addCommand(validateConfigCommand().exitOverride());
  return program;
}

async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      const informational = ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(err.code);
      return informational ? 0 : 2;
    }
    return reportFailure(err);
  }
}

process.exitCode = await main(process.argv);
