/**
 * The entry of the job's bundle (dist/bundle/run-job/run-job-entry.js, built by `npm run build`): the
 * `pull-secret run-job ...` command line alone, as main.ts runs it (same command, same settings,
 * same process guard, same exit codes), without loading the other commands. The `pull-secret`
 * executable (pull-secret.ts) runs it for `run-job` when the bundle was built.
 */
import { runJobCommand } from './run-job.js';
import { buildCliProgram, runCliProgram } from './program.js';

await runCliProgram(buildCliProgram([runJobCommand()]), process.argv);
