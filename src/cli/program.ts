import { Command, CommanderError } from 'commander';
import { writeSync } from 'node:fs';
import { printError, reportFailure } from './output.js';
import { installProcessGuard } from '../observability/process-guard.js';
import { redactor } from '../pullsecret/redact.js';

/**
 * The `pull-secret` program with `commands` (and their subcommands) configured alike: usage errors
 * read the same and exit 2 everywhere. Shared by main.ts (every command) and the job's bundle entry
 * (run-job alone), so both behave the same.
 */
export function buildCliProgram(commands: Command[], version?: string): Command {
  const output = { outputError: (text: string) => printError(text.replace(/^error: /, '').trimEnd()) };
  const program = new Command('pull-secret').description(
    'Lifecycle of image-registry pull secrets for HyperFleet clusters.',
  );
  if (version !== undefined) program.version(version);
  program.showHelpAfterError().exitOverride().configureOutput(output);
  // Commands built apart do not inherit these settings: usage errors must read and exit the same everywhere.
  for (const command of commands) {
    program.addCommand(command.exitOverride().showHelpAfterError().configureOutput(output));
    for (const sub of command.commands) sub.exitOverride().showHelpAfterError().configureOutput(output);
  }
  return program;
}

/**
 * Runs `program` on `argv` as the executable does and sets the exit code: 0 (or what the command
 * set), 0 for help and version, 2 for a usage error, the failure's code otherwise. A stray rejection
 * (a dependency's promise nobody handles) must not end the adapter nor print a raw stack: one
 * classified JSON line instead; the job replaces what happens next (run-job.ts).
 */
export async function runCliProgram(program: Command, argv: string[]): Promise<void> {
  installProcessGuard({ log: guardLine });
  process.exitCode = await exitCodeOf(program, argv);
}

/**
 * The guard's line on stdout, in the logger's shape (src/observability/logger.ts: level, timestamp,
 * fields, message). Written directly: loading the logging library would cost every command, even
 * `--version`, for a line that is rarely written.
 */
function guardLine(fields: object, message: string): void {
  writeSync(
    1,
    redactor.redact(
      `${JSON.stringify({ level: 'error', timestamp: new Date().toISOString(), ...fields, message })}\n`,
    ),
  );
}

async function exitCodeOf(program: Command, argv: string[]): Promise<number> {
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      const informational = ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(
        err.code,
      );
      return informational ? 0 : 2;
    }
    return reportFailure(err);
  }
}
