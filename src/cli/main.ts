#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { inspectCommand } from './inspect.js';
import { adapterCommand, validateConfigCommand } from './adapter.js';
import { runJobCommand } from './run-job.js';
import { devCommand } from './dev.js';
import { statusCommand } from './status.js';
import { preflightCommand } from './preflight.js';
import { storeCommand } from './store.js';
import { transferCommand } from './transfer.js';
import { adminCommand } from './admin.js';
import { tokenCommand } from './token.js';
import { rollbackCommand } from './rollback.js';
import { verifyCommand } from './verify.js';
import { printError, reportFailure } from './output.js';
import { createLogger } from '../observability/logger.js';
import { installProcessGuard } from '../observability/process-guard.js';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** Builds the `pull-secret` command tree. Usage errors exit 2. */
export function buildProgram(): Command {
  const output = { outputError: (text: string) => printError(text.replace(/^error: /, '').trimEnd()) };
  const program = new Command('pull-secret').description('Lifecycle of image-registry pull secrets for HyperFleet clusters.').version(version).showHelpAfterError().exitOverride().configureOutput(output);
  const commands = [
    runJobCommand(),
    inspectCommand(),
    adapterCommand(),
    validateConfigCommand(),
    devCommand(),
    statusCommand(),
    preflightCommand(),
    storeCommand(),
    transferCommand(),
    adminCommand(),
    tokenCommand(),
    rollbackCommand(),
    verifyCommand(),
  ];
  // Commands built apart do not inherit these settings: usage errors must read and exit the same everywhere.
  for (const command of commands) {
    program.addCommand(command.exitOverride().showHelpAfterError().configureOutput(output));
    for (const sub of command.commands) sub.exitOverride().showHelpAfterError().configureOutput(output);
  }
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

// A stray rejection (a dependency's promise nobody handles) must not end the adapter nor print a
// raw stack: one classified JSON line instead; the job replaces what happens next (run-job.ts).
const guardLogger = createLogger({ level: 'error' });
installProcessGuard({ log: (fields, message) => guardLogger.error(fields, message) });

process.exitCode = await main(process.argv);
