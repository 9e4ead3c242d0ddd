// Step two of `npm run build` (after tsc): bundles the two long-lived entry points with the
// dependencies they load, each into a directory of dist/bundle, which the `pull-secret` executable
// runs (src/cli/pull-secret.ts): the job's (dist/cli/run-job-entry.js -> dist/bundle/run-job/, for
// `run-job`) and the adapter's (dist/cli/adapter-entry.js -> dist/bundle/adapter/, for `adapter`).
// A one-shot job spends most of its life loading ~530 modules, the bundle is a handful of files; the
// adapter keeps only the code it reaches (the whole generated API of @kubernetes/client-node
// otherwise sits in its heap). Each entry is bundled on its own, so it loads exactly what it would
// alone; the modules an entry loads only on some paths (the other stores, the Kubernetes API target,
// a broker, ...) stay separate chunks, loaded as lazily as before.
//
//   node scripts/bundle.mjs [--dist DIR] [--out DIR] [--entry FILE]...
//   (defaults: dist, DIST/bundle, DIST/cli/run-job-entry.js and DIST/cli/adapter-entry.js; the tests
//   bundle the .ts entries in src/cli)
//
// - Whitespace and syntax are minified; identifiers are not, so a function or class keeps the name
//   V8 infers from its declaration. Names are not pinned with esbuild's keepNames: it wraps every
//   named closure in a defineProperty call each time the closure is created (about 50 per no-op
//   event in the adapter: about 10% more garbage and CPU per event). Only a symbol esbuild renames to
//   avoid a clash between modules gets another `.name` (a digit appended): none of this project's
//   classes (test/adapter-bundle.test.ts checks), a few of its functions (the name shows only in a
//   stack trace) and a few dependencies' classes whose name nothing here reads.
// - CommonJS dependencies find `require`, `__filename` and `__dirname` as in their own files (the
//   banner); a package read at run time by `require` of a computed name still resolves from the
//   image's node_modules.
// - A source map (no sources) lies next to each file: nothing reads it unless a stray error needs
//   the package it came from (src/observability/bundle-origin.ts).
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { dist: { type: 'string', default: 'dist' }, out: { type: 'string' }, entry: { type: 'string', multiple: true } } });
const dist = resolve(values.dist);
const outdir = resolve(values.out ?? join(dist, 'bundle'));
const entries = values.entry ?? [join(dist, 'cli', 'run-job-entry.js'), join(dist, 'cli', 'adapter-entry.js')];
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
// One build per entry, each in a directory of its own (`run-job-entry.js` -> OUT/run-job/): a chunk
// shared by both would change what each loads.
for (const entry of entries) {
  const result = await build({
    entryPoints: [resolve(entry)],
    outdir: join(outdir, basename(entry).replace(/(-entry)?\.m?[jt]s$/, '')),
    bundle: true,
    nodePaths: [nodeModules],
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: 'chunks/[name]-[hash]',
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    sourcesContent: false,
    banner: { js: banner },
    // whatwg-url (node-fetch 2, under @kubernetes/client-node) requires Node's `punycode`, which
    // Node.js 22 (the image's runtime) deprecates with a warning on stderr at load; the npm package
    // of the same name is the same code, without the warning.
    alias: { punycode: 'punycode/' },
    logLevel: 'warning',
  });
  if (result.errors.length > 0) process.exit(1);
}
