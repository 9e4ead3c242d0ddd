#!/usr/bin/env node
import type { Command } from 'commander';
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
import { buildCliProgram, runCliProgram } from './program.js';
import { packageVersion } from './version.js';

/** Builds the `pull-secret` command tree. Usage errors exit 2. */
export function buildProgram(): Command {
  return buildCliProgram(
    [
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
    ],
    packageVersion(),
  );
}

await runCliProgram(buildProgram(), process.argv);
