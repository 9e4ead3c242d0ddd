/**
 * Registry keys as container tools write them in `auths` (docs/configuration.md): `host`, `host:port`,
 * `host[:port]/namespace[/repo...]`, and Docker Hub's legacy `https://index.docker.io/v1/`. Like the
 * kubelet, a key may carry an `https://` or `http://` scheme and a trailing `/`: it adds `https://` to a
 * key without one and parses it as a URL, matching on host and path only (`parseSchemelessURL` and
 * `BasicDockerKeyring.Add` in
 * https://github.com/kubernetes/kubernetes/blob/master/pkg/credentialprovider/keyring.go).
 */

const DOCKER_HUB_LEGACY = 'https://index.docker.io/v1/';
const HOST_LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const IPV6_HOST = /^\[[0-9A-Fa-f:.]+\]$/;
/** Path components follow the image reference grammar: lowercase alphanumerics with separators. */
const PATH_COMPONENT = /^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$/;
/** The schemes the kubelet recognises on a key (exact, lowercase prefixes as in keyring.go). */
const SCHEME = /^https?:\/\//;

function isHost(host: string): boolean {
  if (IPV6_HOST.test(host)) return true;
  if (host.length === 0 || host.length > 253) return false;
  return host.split('.').every((label) => HOST_LABEL.test(label));
}

function isPort(port: string): boolean {
  if (!/^[0-9]{1,5}$/.test(port)) return false;
  const n = Number(port);
  return n >= 1 && n <= 65535;
}

/** True when `key` is a registry key the container tools accept. */
export function isValidRegistryKey(key: string): boolean {
  if (key === DOCKER_HUB_LEGACY) return true;
  const withoutScheme = key.replace(SCHEME, '');
  const location =
    withoutScheme !== key && withoutScheme.endsWith('/') ? withoutScheme.slice(0, -1) : withoutScheme;
  const [authority = '', ...path] = location.split('/');
  const portAt = authority.startsWith('[') ? authority.indexOf(']:') + 1 : authority.lastIndexOf(':');
  const host = portAt > 0 ? authority.slice(0, portAt) : authority;
  const port = portAt > 0 ? authority.slice(portAt + 1) : undefined;
  if (!isHost(host)) return false;
  if (port !== undefined && !isPort(port)) return false;
  return path.every((component) => PATH_COMPONENT.test(component));
}
