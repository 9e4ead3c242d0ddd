import { constants, lstatSync, type Stats } from 'node:fs';
import { access, lstat, mkdir, open, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { PullSecretError } from '../errors/index.js';
import { quoteIdentifier } from '../pullsecret/identifiers.js';

/**
 * The job's own paths, checked before its first store write (docs/configuration.md, job table):
 * `RESULTS_PATH` absent or a regular file in a writable directory, `MANIFEST_DIR` a directory the
 * job can write. A refused path is CONFIG_INVALID (exit 2) and nothing was written.
 */

/** What a non-regular file is, for a message (lstat: a symlink is named as one, never followed). */
function kindOf(s: Stats): string {
  if (s.isDirectory()) return 'a directory';
  if (s.isSymbolicLink()) return 'a symbolic link';
  if (s.isFIFO()) return 'a FIFO';
  if (s.isCharacterDevice() || s.isBlockDevice()) return 'a device';
  if (s.isSocket()) return 'a socket';
  return 'not a regular file';
}

function refuse(variable: string, path: string, problem: string): never {
  throw new PullSecretError(
    'CONFIG_INVALID',
    `invalid environment variable ${variable}: ${quoteIdentifier(path)} ${problem}; nothing was written`,
  );
}

/**
 * Why the result file may not replace what is at `path` (undefined: absent or a regular file).
 * Synchronous, for the last check right before the rename that publishes the result.
 */
export function resultPathProblem(path: string): string | undefined {
  let s: Stats;
  try {
    s = lstatSync(path);
  } catch {
    return undefined;
  }
  return s.isFile() ? undefined : `is ${kindOf(s)}, not a regular file`;
}

/**
 * `RESULTS_PATH`: absent or a regular file (not a directory, device, FIFO or symlink), in an existing writable
 * directory.
 */
export async function checkResultsPath(path: string): Promise<void> {
  const existing = await lstat(path).catch(() => undefined);
  if (existing !== undefined && !existing.isFile())
    refuse('RESULTS_PATH', path, `is ${kindOf(existing)}, not a regular file`);
  const dir = dirname(path);
  const problem = await stat(dir).then(
    (s) =>
      s.isDirectory()
        ? access(dir, constants.W_OK).then(
            () => undefined,
            () => 'is not writable',
          )
        : 'is not a directory',
    () => 'does not exist',
  );
  if (problem !== undefined) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `invalid environment variable RESULTS_PATH: its directory ${quoteIdentifier(dir)} ${problem}; ` +
        `nothing was written`,
    );
  }
}

/**
 * `MANIFEST_DIR`: an existing directory, or one created here level by level (never `mkdir -p`,
 * which spun forever under `/proc`), then proven writable by creating and removing a probe file:
 * `access(W_OK)` says yes to root everywhere, even on read-only pseudo file systems.
 */
export async function checkManifestDir(path: string): Promise<void> {
  const problem = await ensureDirectory(path, 0);
  if (problem !== undefined) refuse('MANIFEST_DIR', path, problem);
  const probe = join(path, `.pull-secret-probe-${process.pid}`);
  try {
    const handle = await open(probe, 'wx', 0o600);
    await handle.close();
  } catch (err) {
    refuse(
      'MANIFEST_DIR',
      path,
      `is not a directory the job can write (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  await rm(probe, { force: true });
}

/** Path depth bound: a loop through symlinks or `..` cannot recurse forever. */
const MAX_DEPTH = 64;

async function ensureDirectory(path: string, depth: number): Promise<string | undefined> {
  const s = await stat(path).catch((err: NodeJS.ErrnoException) => err);
  if (!(s instanceof Error)) return s.isDirectory() ? undefined : 'is not a directory';
  if (s.code === 'ENOTDIR') return 'is not a directory (a file is on its path)';
  if (s.code !== 'ENOENT') return `cannot be read (${s.code ?? 'error'})`;
  const parent = dirname(path);
  if (parent === path || depth >= MAX_DEPTH) return 'cannot be created';
  const above = await ensureDirectory(parent, depth + 1);
  if (above !== undefined) return above;
  try {
    await mkdir(path, { mode: 0o700 });
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'EEXIST' ? ensureDirectory(path, depth + 1) : `cannot be created (${code ?? 'error'})`;
  }
}
