import { readFileSync } from 'node:fs';

/**
 * The version in this package's package.json, found by walking up from this file: it is compiled to
 * dist/cli/ and bundled into dist/bundle/<entry>/ or dist/bundle/chunks/, at different depths.
 * @throws Error when no package.json of `pull-secret` lies above (a broken installation).
 */
export function packageVersion(): string {
  for (let up = new URL('../', import.meta.url); up.pathname !== '/'; up = new URL('../', up)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', up), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'pull-secret' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // no package.json at this level: look one higher
    }
  }
  throw new Error('package.json of pull-secret not found above the executable');
}
