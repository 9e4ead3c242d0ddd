import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A bundle built from source in a temp dir, laid out as dist/ is: cli/pull-secret.js and bundle/<name>/. */
export interface BuiltBundle {
  readonly dir: string;
  /** The `pull-secret` executable, compiled alone: it has no main.js to fall back on. */
  readonly executable: string;
  /** The bundle entry of `name` (`run-job`, `adapter`). */
  entry(name: string): string;
  remove(): Promise<void>;
}

/**
 * Bundles `entries` (src/cli/<name>-entry.ts) with scripts/bundle.mjs, as `npm run build` does, and
 * compiles the executable beside them.
 */
export async function buildBundle(names: string[]): Promise<BuiltBundle> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-bundle-'));
  const entries = names.flatMap((name) => ['--entry', `src/cli/${name}-entry.ts`]);
  await promisify(execFile)(process.execPath, ['scripts/bundle.mjs', ...entries, '--out', join(dir, 'bundle')], { cwd: ROOT });
  await build({ entryPoints: [join(ROOT, 'src/cli/pull-secret.ts')], outdir: join(dir, 'cli'), format: 'esm', platform: 'node', logLevel: 'warning' });
  return {
    dir,
    executable: join(dir, 'cli', 'pull-secret.js'),
    entry: (name) => join(dir, 'bundle', name, `${name}-entry.js`),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The .js files under `dir`, recursively (a build, a bundle). */
export async function jsFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.js')).map((e) => join(e.parentPath, e.name));
}
