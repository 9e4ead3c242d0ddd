// Assembles the image's runtime file layout into a directory, from a build (`npm run build`): the
// Dockerfile's build stage RUNs it and its runtime stage COPYs the result onto `/`, and
// test/build/image-install.test.ts runs the job and the adapter from the same result alone.
//
//   node scripts/assemble-image-layout.mjs --out DIR [--dist DIR]   (default dist)
//
// DIR/opt/pull-secret/            the WORKDIR of the image
//   package.json                  name, version and "type": "module" (the bundles are ES modules)
//   bin/pull-secret               -> ../dist/cli/pull-secret.js (on the image's PATH)
//   dist/cli/pull-secret.js       the executable (src/cli/pull-secret.ts)
//   dist/bundle/                  the bundles and their shared chunks (scripts/bundle.mjs), with source maps
//   node_modules/...              only the files a bundled dependency reads from disk at run time (RUNTIME_FILES)
// DIR/usr/local/bin/pull-secret   -> the executable (the upstream chart's Job command), a relative link
//
// Directories are 0755, files 0644, the executable 0755: the image's root owns them (COPY without
// --chown) and its non-root user reads and runs them, writing nothing.
import { chmod, copyFile, cp, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The image's WORKDIR, relative to the root of the layout. */
export const APP_DIR = 'opt/pull-secret';

/**
 * Files bundled dependencies read from disk by path at run time (not by import, so esbuild cannot
 * bundle them), relative to node_modules. Each is looked for beside the chunk that reads it first,
 * then up the directory tree: the layout puts them where Node's resolution finds them from
 * dist/bundle.
 */
export const RUNTIME_FILES = [];

const ROOT = fileURLToPath(new URL('../', import.meta.url));

async function setModes(dir) {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await setModes(path);
    else if (entry.isFile()) await chmod(path, 0o644);
  }
}

const { values } = parseArgs({
  options: { dist: { type: 'string', default: 'dist' }, out: { type: 'string' } },
});
if (values.out === undefined) {
  console.error('usage: node scripts/assemble-image-layout.mjs --out DIR [--dist DIR]');
  process.exit(2);
}
const out = resolve(values.out);
const dist = resolve(values.dist);
const app = join(out, APP_DIR);
await rm(out, { recursive: true, force: true });
await mkdir(join(app, 'dist', 'cli'), { recursive: true });
await cp(join(dist, 'bundle'), join(app, 'dist', 'bundle'), { recursive: true });
await copyFile(join(dist, 'cli', 'pull-secret.js'), join(app, 'dist', 'cli', 'pull-secret.js'));
const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
const { name, version, description, license, type, engines } = pkg;
await writeFile(
  join(app, 'package.json'),
  `${JSON.stringify({ name, version, description, license, private: true, type, engines }, null, 2)}\n`,
);
for (const file of RUNTIME_FILES) {
  await mkdir(dirname(join(app, 'node_modules', file)), { recursive: true });
  await copyFile(join(ROOT, 'node_modules', file), join(app, 'node_modules', file));
}
await setModes(out);
await chmod(join(app, 'dist', 'cli', 'pull-secret.js'), 0o755);
await mkdir(join(app, 'bin'), { mode: 0o755 });
await symlink('../dist/cli/pull-secret.js', join(app, 'bin', 'pull-secret'));
await mkdir(join(out, 'usr', 'local', 'bin'), { recursive: true, mode: 0o755 });
await symlink(`../../../${APP_DIR}/dist/cli/pull-secret.js`, join(out, 'usr', 'local', 'bin', 'pull-secret'));
