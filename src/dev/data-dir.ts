import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PullSecretError } from '../errors/index.js';

/** Default data directory of `pull-secret dev` (relative to the working directory). */
export const DEFAULT_DEV_DATA_DIR = '.pull-secret/dev';

/** File that marks a directory as the dev stack's, so only such a directory is ever cleared. */
const MARKER = '.pull-secret-dev';

/** Where the dev stack keeps its state, below its data directory. */
export interface DevPaths {
  dataDir: string;
  /** The API stand-in's state file. */
  apiState: string;
  /** The local encrypted secret store. */
  store: string;
  /** The Kubernetes Secret manifests. */
  manifests: string;
  /** The JSON log file (when logs go to a file). */
  log: string;
  /** The admin API's token file (current and previous token; rotated by the adapter). */
  adminTokens: string;
}

export function devPaths(dataDir: string): DevPaths {
  return {
    dataDir,
    apiState: join(dataDir, 'api-state.json'),
    store: join(dataDir, 'store'),
    manifests: join(dataDir, 'manifests'),
    log: join(dataDir, 'dev.log'),
    adminTokens: join(dataDir, 'admin-tokens.json'),
  };
}

/**
 * Creates the data directory (mode 0700: it holds the store key) and marks it. With `fresh`, empties
 * it first, but only when it is absent, empty or marked as a dev data directory: a mistyped path must
 * never wipe anything else.
 *
 * @throws CONFIG_INVALID when asked to clear a directory that is not a dev data directory, or `dataDir` is a file
 */
export async function prepareDataDir(dataDir: string, options: { fresh: boolean }): Promise<DevPaths> {
  const entries = await readdir(dataDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    if (err.code === 'ENOTDIR')
      throw new PullSecretError('CONFIG_INVALID', `the dev data directory ${dataDir} is a file`);
    throw err;
  });
  if (options.fresh && entries !== undefined && entries.length > 0) {
    if (!entries.includes(MARKER)) {
      throw new PullSecretError(
        'CONFIG_INVALID',
        `refusing to clear ${dataDir}: it is not a pull-secret dev data directory (no ${MARKER} file); ` +
          `choose another --data-dir`,
      );
    }
    await rm(dataDir, { recursive: true, force: true });
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const marker = join(dataDir, MARKER);
  if (
    !(await stat(marker).then(
      () => true,
      () => false,
    ))
  ) {
    await writeFile(
      marker,
      'Data directory of `pull-secret dev`: API stand-in state, local secret store, manifests, logs.\n',
      { mode: 0o600 },
    );
  }
  return devPaths(dataDir);
}
