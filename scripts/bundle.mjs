// Step two of `npm run build` (after tsc): bundles the job's entry, dist/cli/run-job-entry.js, with
// the dependencies it loads into dist/job-bundle/, which the `pull-secret` executable runs for
// `run-job` (src/cli/pull-secret.ts). A one-shot job spends most of its life loading ~530 modules;
// the bundle is a handful of files. The modules the job loads only on some paths (the other stores,
// the Kubernetes API target, ...) stay separate chunks, loaded as lazily as before.
//
//   node scripts/bundle-job.mjs [--dist DIR] [--out DIR] [--entry FILE]
//   (defaults: dist, DIST/job-bundle, DIST/cli/run-job-entry.js; the tests bundle src/cli/run-job-entry.ts)
//
// - Whitespace and syntax are minified, names are kept (error classes, stray-error reports and
//   SDK code read `.name`).
// - CommonJS dependencies find `require`, `__filename` and `__dirname` as in their own files (the
//   banner); a package read at run time by `require` of a computed name still resolves from the
//   image's node_modules.
// - A source map (no sources) lies next to each file: nothing reads it unless a stray error needs
//   the package it came from (src/observability/bundle-origin.ts).
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { dist: { type: 'string', default: 'dist' }, out: { type: 'string' }, entry: { type: 'string' } } });
const dist = resolve(values.dist);
const outdir = resolve(values.out ?? join(dist, 'job-bundle'));
// The checkout's dependencies, also for a --dist outside it (the image-install test compiles elsewhere).
const nodeModules = fileURLToPath(new URL('../node_modules', import.meta.url));

const banner = [
  "import { createRequire as __bundleCreateRequire } from 'node:module';",
  "import { fileURLToPath as __bundleFileURLToPath } from 'node:url';",
  "import { dirname as __bundleDirname } from 'node:path';",
  'const require = __bundleCreateRequire(import.meta.url);',
  'const __filename = __bundleFileURLToPath(import.meta.url);',
  'const __dirname = __bundleDirname(__filename);',
].join(' ');

await rm(outdir, { recursive: true, force: true });
const result = await build({
  entryPoints: [resolve(values.entry ?? join(dist, 'cli', 'run-job-entry.js'))],
  outdir,
  bundle: true,
  nodePaths: [nodeModules],
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  sourcemap: 'linked',
  sourcesContent: false,
  banner: { js: banner },
  logLevel: 'warning',
});
if (result.errors.length > 0) process.exit(1);
