import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** The image's WORKDIR inside an assembled layout (scripts/assemble-image-layout.mjs). */
export const LAYOUT_APP_DIR = 'opt/pull-secret';

/**
 * A bundle built from source in a temp dir and assembled into the image's file layout
 * (scripts/assemble-image-layout.mjs), as the Dockerfile does: nothing but the layout is reachable
 * from it (no node_modules above it).
 */
export interface BuiltBundle {
  /** The root of the layout (the image's `/`). */
  readonly layout: string;
  /** The layout's dist/: cli/pull-secret.js and bundle/<name>/. */
  readonly dir: string;
  /** The `pull-secret` executable, compiled alone: it has no main.js to fall back on. */
  readonly executable: string;
  /** The bundle entry of `name` (`run-job`, `adapter`, `main`). */
  entry(name: string): string;
  remove(): Promise<void>;
}

/**
 * Bundles `entries` (src/cli/<name>-entry.ts, or main.ts for `main`) with scripts/bundle.mjs, as
 * `npm run build` does, compiles the executable beside them and assembles the image layout from them.
 */
export async function buildBundle(names: string[]): Promise<BuiltBundle> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-bundle-'));
  const build_ = join(dir, 'build');
  const entries = names.flatMap((name) => [
    '--entry',
    `src/cli/${name === 'main' ? 'main' : `${name}-entry`}.ts`,
  ]);
  await run(process.execPath, ['scripts/bundle.mjs', ...entries, '--out', join(build_, 'bundle')], {
    cwd: ROOT,
  });
  await build({
    entryPoints: [join(ROOT, 'src/cli/pull-secret.ts')],
    outdir: join(build_, 'cli'),
    format: 'esm',
    platform: 'node',
    logLevel: 'warning',
  });
  const layout = join(dir, 'layout');
  await assembleLayout(build_, layout);
  // The temp dir itself is 0700: the image's user must reach the layout inside it.
  await chmod(dir, 0o755);
  const app = join(layout, LAYOUT_APP_DIR, 'dist');
  return {
    layout,
    dir: app,
    executable: join(app, 'cli', 'pull-secret.js'),
    entry: (name) => join(app, 'bundle', name, `${name === 'main' ? 'main' : `${name}-entry`}.js`),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Runs scripts/assemble-image-layout.mjs: the build in `dist` (cli/, bundle/) laid out under `out`. */
export async function assembleLayout(dist: string, out: string): Promise<void> {
  await run(process.execPath, ['scripts/assemble-image-layout.mjs', '--dist', dist, '--out', out], {
    cwd: ROOT,
  });
}

/**
 * Spawn options that run a process as the image's user, UID and GID 1000, when the tests run as
 * root (CI): the layout is root's, 0755/0644, so the process can read and run it but write nothing
 * there. Empty for another user (then the layout's modes do not stop its owner).
 */
export function imageUser(): { uid?: number; gid?: number } {
  return process.getuid?.() === 0 ? { uid: 1000, gid: 1000 } : {};
}

/** Makes test files (a config, a CA, a kubeconfig) and their directories readable by the image's user. */
export async function readableByImageUser(...files: string[]): Promise<void> {
  for (const file of files) {
    await chmod(dirname(file), 0o755);
    await chmod(file, 0o644);
  }
}

/** The .js files under `dir`, recursively (a build, a bundle). */
export async function jsFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.js')).map((e) => join(e.parentPath, e.name));
}
