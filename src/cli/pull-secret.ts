#!/usr/bin/env node
/**
 * The `pull-secret` executable (package.json "bin", the image's ENTRYPOINT, the Jobs' command).
 *
 * Every command runs from the bundles (dist/bundle, built by `npm run build`): one set of files
 * instead of ~530 modules to resolve, read and compile, and only the code the command reaches in
 * memory. The image holds the bundles and this file, not the compiled modules.
 * - `run-job` is a one-shot process whose start-up is most of its run; it also runs with V8's compilers
 *   above its interpreter off (a process that lives half a second gains nothing from them; they cost
 *   about 8 MB of memory; V8 refuses these flags in NODE_OPTIONS).
 * - `adapter` keeps V8's defaults: a long-running service needs its optimising compilers.
 * - Every other command runs the main bundle, which loads a command's dependencies when it runs.
 * `dev` runs main.js where it exists (a source checkout: the bundles leave the dev stack out), and so
 * does any command where the bundles were not built (tsx, tsc alone).
 */
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

/** The bundle entry of each command; the main bundle's for the others. */
const BUNDLES: ReadonlyMap<string, URL> = new Map([
  ['run-job', new URL('../bundle/run-job/run-job-entry.js', import.meta.url)],
  ['adapter', new URL('../bundle/adapter/adapter-entry.js', import.meta.url)],
]);
const MAIN_BUNDLE = new URL('../bundle/main/main.js', import.meta.url);
const MAIN = new URL('./main.js', import.meta.url);
/** The tiers above V8's interpreter: TurboFan, Maglev, Sparkplug. */
const JOB_V8_FLAGS = ['--no-opt', '--no-maglev', '--no-sparkplug'];

const command = process.argv[2] ?? '';
if (command === 'run-job') {
  // Only the tiering decisions read these: code already running is unaffected, nothing else changes.
  for (const flag of JOB_V8_FLAGS) setFlagsFromString(flag);
}
const bundle = BUNDLES.get(command) ?? MAIN_BUNDLE;
const unbundled = !existsSync(bundle) || (command === 'dev' && existsSync(MAIN));
await import(unbundled ? MAIN.href : bundle.href);
