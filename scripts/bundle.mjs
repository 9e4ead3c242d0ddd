// Step two of `npm run build` (after tsc): bundles the executable's three entry points with the
// dependencies they load, in one esbuild build into dist/bundle, which the `pull-secret` executable
// runs (src/cli/pull-secret.ts): the job's (dist/cli/run-job-entry.js -> dist/bundle/run-job/, for
// `run-job`), the adapter's (dist/cli/adapter-entry.js -> dist/bundle/adapter/, for `adapter`) and
// every other command's (dist/cli/main.js -> dist/bundle/main/). The image carries these files and
// nothing else of the code (scripts/assemble-image-layout.mjs).
//
//   node scripts/bundle.mjs [--dist DIR] [--out DIR] [--entry FILE]...
//   (defaults: dist, DIST/bundle, DIST/cli/{run-job-entry,adapter-entry,main}.js; the tests bundle
//   the .ts entries in src/cli)
//
// - One build, so a module two entries load lies in one shared chunk, not in a copy per entry (the
//   image holds each module once). esbuild puts in one chunk exactly the modules the same entries
//   (and dynamic imports) reach, so an entry still loads only what it would alone: the job does not
//   load the adapter's code, and a module loaded only on some paths (the other stores, the
//   Kubernetes API target, a broker, a command's dependencies) stays a chunk loaded when reached.
// - Whitespace and syntax are minified; identifiers are not, so a function or class keeps the name
//   V8 infers from its declaration. Names are not pinned with esbuild's keepNames: it wraps every
//   named closure in a defineProperty call each time the closure is created (about 50 per no-op
//   event in the adapter: about 10% more garbage and CPU per event). Only a symbol esbuild renames to
//   avoid a clash between modules gets another `.name` (a digit appended): none of this project's
//   classes (test/build/adapter-bundle.test.ts checks), a few of its functions (the name shows only in a
//   stack trace) and a few dependencies' classes whose name nothing here reads.
// - CommonJS dependencies find `require`, `__filename` and `__dirname` as in their own files (the
//   banner). The files a dependency reads from disk at run time are not bundled: the image layout
//   copies them (scripts/assemble-image-layout.mjs).
// - The dev stack (src/dev, `pull-secret dev`) is left out: it needs the development dependencies
//   and the API contract. In the bundle its modules are stand-ins that fail to load as a missing
//   module would, so `dev` says it is not part of the installation; a source checkout runs it from
//   dist/cli/main.js.
// - A source map (no sources) lies next to each file: nothing reads it unless a stray error needs
//   the package it came from (src/observability/bundle-origin.ts).
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    dist: { type: 'string', default: 'dist' },
    out: { type: 'string' },
    entry: { type: 'string', multiple: true },
  },
});
const dist = resolve(values.dist);
const outdir = resolve(values.out ?? join(dist, 'bundle'));
const entries =
  values.entry ?? ['run-job-entry.js', 'adapter-entry.js', 'main.js'].map((file) => join(dist, 'cli', file));
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

/** The dev stack's modules (imported by the `dev` command only) as stand-ins that fail like a missing module. */
const devStackLeftOut = {
  name: 'dev-stack-left-out',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/dev\// }, (args) =>
      /[\\/]cli[\\/]dev\.[jt]s$/.test(args.importer)
        ? { path: args.path.replace(/^\.\./, 'dist'), namespace: 'dev-stack' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'dev-stack' }, (args) => ({
      contents: `throw Object.assign(new Error(${JSON.stringify(`Cannot find module '${args.path.replace(/\.ts$/, '.js')}'`)}), { code: 'ERR_MODULE_NOT_FOUND' });`,
      loader: 'js',
    }));
  },
};

await rm(outdir, { recursive: true, force: true });
const result = await build({
  // `run-job-entry.js` -> OUT/run-job/run-job-entry.js, `main.js` -> OUT/main/main.js.
  entryPoints: entries.map((entry) => {
    const name = basename(entry).replace(/\.m?[jt]s$/, '');
    return { in: resolve(entry), out: join(name.replace(/-entry$/, ''), name) };
  }),
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
  sourcemap: 'linked',
  sourcesContent: false,
  banner: { js: banner },
  plugins: [devStackLeftOut],
  // whatwg-url (node-fetch 2, under @kubernetes/client-node) requires Node's `punycode`, which
  // Node.js 22 (the image's runtime) deprecates with a warning on stderr at load; the npm package
  // of the same name is the same code, without the warning.
  alias: { punycode: 'punycode/' },
  logLevel: 'warning',
});
if (result.errors.length > 0) process.exit(1);
