import { execFile } from 'node:child_process';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** The most the runtime layout may add to the base image (issue 28). */
export const LAYOUT_TARGET_MB = 40;

/**
 * Assembles the image's runtime layout from the build in dist/ (scripts/assemble-image-layout.mjs,
 * as the Dockerfile does) and returns what it adds to the base image: MB of files and their count.
 */
export async function imageLayoutSize(): Promise<{ mb: number; files: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-layout-'));
  try {
    await promisify(execFile)(
      process.execPath,
      ['scripts/assemble-image-layout.mjs', '--dist', 'dist', '--out', dir],
      { cwd: ROOT },
    );
    let bytes = 0;
    let files = 0;
    for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      bytes += (await lstat(join(entry.parentPath, entry.name))).size;
      files++;
    }
    return { mb: bytes / 1024 / 1024, files };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
