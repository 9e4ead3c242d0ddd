/** The shape every store's endpoint URL shares, whatever its store's own rules add. */

/**
 * `value` parsed as a URL that names a host and nothing more (no credentials, query, fragment or
 * path: a path other than `/`); `undefined` when it does not parse or carries any of them.
 */
export function parseHostOnlyUrl(value: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  const bare =
    url.username === '' &&
    url.password === '' &&
    url.search === '' &&
    url.hash === '' &&
    (url.pathname === '/' || url.pathname === '');
  return bare ? url : undefined;
}
