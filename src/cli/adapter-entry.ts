/**
 * The entry of the adapter's bundle (dist/bundle/adapter/adapter-entry.js, built by `npm run build`):
 * the `pull-secret adapter ...` command line alone, as main.ts runs it (same command, same settings,
 * same process guard, same exit codes), without loading the other commands. The `pull-secret`
 * executable (pull-secret.ts) runs it for `adapter` when the bundle was built.
 */
import { adapterCommand } from './adapter.js';
import { buildCliProgram, runCliProgram } from './program.js';

await runCliProgram(buildCliProgram([adapterCommand()]), process.argv);
