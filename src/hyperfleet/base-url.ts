import { PullSecretError } from '../errors/index.js';
import { assertClusterId } from '../pullsecret/identifiers.js';

/** The contract's base path; every route hangs under it. */
export const API_BASE_PATH = '/api/hyperfleet/v1';

/**
 * Normalizes the configured base URL to `{scheme}://{host}[:port][/prefix]/api/hyperfleet/v1`, appending
 * the base path unless it is already there. Accepts `http:` and `https:` only; refuses embedded
 * credentials, a query or a fragment (the token comes from a file, and a query would be dropped
 * silently by path joining).
 *
 * @throws CONFIG_INVALID
 */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PullSecretError('CONFIG_INVALID', 'the HyperFleet API base URL is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `the HyperFleet API base URL must use http or https, not ${url.protocol}`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new PullSecretError(
      'CONFIG_INVALID',
      'the HyperFleet API base URL must not embed credentials; use the token file',
    );
  }
  if (url.search !== '' || url.hash !== '') {
    throw new PullSecretError(
      'CONFIG_INVALID',
      'the HyperFleet API base URL must not have a query or a fragment',
    );
  }
  const path = url.pathname.replace(/\/+$/, '');
  const full = path.endsWith(API_BASE_PATH) ? path : `${path}${API_BASE_PATH}`;
  return `${url.origin}${full}`;
}

/**
 * The path of one cluster, with the id checked and encoded so no id can change the route
 * (`../`, `/`, `?`, `%2F` are all refused before any request is made).
 *
 * @throws IDENTIFIER_INVALID
 */
export function clusterPath(clusterId: string, suffix = ''): string {
  assertClusterId(clusterId);
  return `/clusters/${encodeURIComponent(clusterId)}${suffix}`;
}
