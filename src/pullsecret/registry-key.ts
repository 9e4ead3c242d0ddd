/**
 * Registry keys as container tools write them in `auths` (docs/configuration.md): `host`, `host:port`,
 * `host[:port]/namespace[/repo...]`, and Docker Hub's legacy `https://index.docker.io/v1/`.
 */

const DOCKER_HUB_LEGACY = 'https://index.docker.io/v1/';
const HOST_LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const IPV6_HOST = /^\[[0-9A-Fa-f:.]+\]$/;
/** Path components follow the image reference grammar: lowercase alphanumerics with separators. */
const PATH_COMPONENT = /^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$/;

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
  const [authority = '', ...path] = key.split('/');
  const portAt = authority.startsWith('[') ? authority.indexOf(']:') + 1 : authority.lastIndexOf(':');
  const host = portAt > 0 ? authority.slice(0, portAt) : authority;
  const port = portAt > 0 ? authority.slice(portAt + 1) : undefined;
  if (!isHost(host)) return false;
  if (port !== undefined && !isPort(port)) return false;
  return path.every((component) => PATH_COMPONENT.test(component));
}
