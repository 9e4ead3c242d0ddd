#!/usr/bin/env node
/**
 * The `pull-secret` executable (package.json "bin", the image's ENTRYPOINT, the Jobs' command).
 *
 * `run-job` is a one-shot process whose start-up is most of its run: it runs from the job's bundle
 * (dist/job-bundle, built by `npm run build`: one set of files instead of ~530 modules to resolve,
 * read and compile), with V8's compilers above its interpreter off (a process that lives half a second
 * gains nothing from them; they cost about 8 MB of memory; V8 refuses these flags in NODE_OPTIONS).
 * Every other command, and `run-job` where the bundle was not built (tsx, tsc alone), runs main.js.
 */
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

const JOB_BUNDLE = new URL('../job-bundle/run-job-entry.js', import.meta.url);
/** The tiers above V8's interpreter: TurboFan, Maglev, Sparkplug. */
const JOB_V8_FLAGS = ['--no-opt', '--no-maglev', '--no-sparkplug'];

if (process.argv[2] === 'run-job') {
  // Only the tiering decisions read these: code already running is unaffected, nothing else changes.
  for (const flag of JOB_V8_FLAGS) setFlagsFromString(flag);
}
await import(process.argv[2] === 'run-job' && existsSync(JOB_BUNDLE) ? JOB_BUNDLE.href : './main.js');
