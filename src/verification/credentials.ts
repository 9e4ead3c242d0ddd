import { parseStrictJson } from '../pullsecret/strict-json.js';
import { decodeStrictBase64, isObject } from '../pullsecret/validate.js';

/** Docker Hub's legacy `auths` key and the host its registry API answers on. */
const DOCKER_HUB_LEGACY = 'https://index.docker.io/v1/';
const DOCKER_HUB_API = 'registry-1.docker.io';

/** What one `auths` entry lets a login check do. */
export type RegistryCredential =
  | { registry: string; host: string; kind: 'basic'; username: string; password: string }
  /** An OAuth refresh token (`identitytoken`) or a bare `registrytoken`: not checked (see docs/verification.md). */
  | { registry: string; host: string; kind: 'token' }
  /** An entry without usable credentials (validation refuses these; kept so the report names it). */
  | { registry: string; host: string; kind: 'none' };

/** `host[:port]` of a registry key (`host/namespace` → `host`; Docker Hub's legacy URL → its API host). */
export function registryHost(key: string): string {
  if (key === DOCKER_HUB_LEGACY || key === 'docker.io' || key === 'index.docker.io') return DOCKER_HUB_API;
  return key.replace(/^https?:\/\//i, '').split('/')[0] ?? key;
}

/**
 * The credentials of each `auths` entry of a pull secret document: `auth` (base64 `user:password`),
 * else `username` + `password`, else a token. Never throws: a document that does not parse gives
 * none (validation reports it first anyway). Credential strings are for the login check only and
 * must be registered with the redactor by the caller (`credentialStrings` covers them).
 */
export function registryCredentials(text: string): RegistryCredential[] {
  const parsed = parseStrictJson(text);
  if (!parsed.ok || !isObject(parsed.value) || !isObject(parsed.value.auths)) return [];
  const out: RegistryCredential[] = [];
  for (const [registry, entry] of Object.entries(parsed.value.auths)) {
    const host = registryHost(registry);
    if (!isObject(entry)) {
      out.push({ registry, host, kind: 'none' });
      continue;
    }
    const decoded = typeof entry.auth === 'string' ? decodeStrictBase64(entry.auth) : undefined;
    const colon = decoded?.indexOf(':') ?? -1;
    if (decoded !== undefined && colon > 0) {
      out.push({
        registry,
        host,
        kind: 'basic',
        username: decoded.slice(0, colon),
        password: decoded.slice(colon + 1),
      });
    } else if (
      typeof entry.username === 'string' &&
      typeof entry.password === 'string' &&
      entry.username.length > 0
    ) {
      out.push({ registry, host, kind: 'basic', username: entry.username, password: entry.password });
    } else if (typeof entry.identitytoken === 'string' || typeof entry.registrytoken === 'string') {
      out.push({ registry, host, kind: 'token' });
    } else {
      out.push({ registry, host, kind: 'none' });
    }
  }
  return out;
}

/** The `Authorization: Basic` value of a credential. */
export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}
