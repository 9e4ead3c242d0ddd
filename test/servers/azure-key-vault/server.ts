import { createServer, type Server } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTestPki } from '../kubernetes/tls.js';
import { FaultInjector, faultBody, OPERATIONS, type FaultSpec, type Operation } from './faults.js';
import { IdentityStandIn, KEY_VAULT_RESOURCE } from './identity.js';
import { VaultError, VaultState, type StoredSecret, type StoredVersion } from './state.js';

/** API versions the server accepts (the SDK pinned here sends 2025-07-01). */
export const API_VERSIONS = ['7.4', '7.5', '7.6', '2025-07-01'];

export interface KeyVaultTestServerOptions {
  tenantId?: string;
  clientId?: string;
}

export interface KeyVaultTestServer {
  /** `https://127.0.0.1:PORT`: the vault URL, and the authority host of the identity stand-in. */
  readonly url: string;
  readonly tenantId: string;
  readonly clientId: string;
  /** The federated token the workload presents; written to `tokenFile`. */
  readonly assertion: string;
  readonly tokenFile: string;
  /** The test CA (PEM) and its file, for AZURE_KEY_VAULT_CA_FILE / NODE_EXTRA_CA_CERTS. */
  readonly caPem: string;
  readonly caFile: string;
  readonly state: VaultState;
  readonly identity: IdentityStandIn;
  /** Authorized calls per operation (401 challenges and token requests are counted apart). */
  readonly calls: Map<Operation, number>;
  readonly totalCalls: number;
  /** Unauthenticated requests answered with the 401 challenge. */
  readonly challenges: number;
  /** Calls that wrote (set, update, delete, recover, purge). */
  readonly writes: number;
  injectFault(spec: FaultSpec): void;
  clearFaults(): void;
  /** The environment that points `DefaultAzureCredential` (workload identity) and the store here. */
  env(): Record<string, string>;
  stop(): Promise<void>;
}

const WRITES: ReadonlySet<Operation> = new Set([
  'SetSecret',
  'UpdateSecret',
  'DeleteSecret',
  'RecoverDeletedSecret',
  'PurgeDeletedSecret',
]);

interface Route {
  operation: Operation;
  name: string;
  version: string;
}

/** Maps a request to its Key Vault operation, or undefined for a path the API does not have. */
function route(method: string, path: string): Route | undefined {
  const parts = path.split('/').slice(1).map(decodeURIComponent);
  const [collection, name = '', third, fourth] = parts;
  if (collection === 'secrets' && name !== '') {
    if (parts.length === 2 && method === 'PUT') return { operation: 'SetSecret', name, version: '' };
    if (parts.length === 2 && method === 'DELETE') return { operation: 'DeleteSecret', name, version: '' };
    if (third === 'versions' && parts.length === 3 && method === 'GET')
      return { operation: 'GetSecretVersions', name, version: '' };
    if ((parts.length === 2 || parts.length === 3) && fourth === undefined) {
      if (method === 'GET') return { operation: 'GetSecret', name, version: third ?? '' };
      if (method === 'PATCH') return { operation: 'UpdateSecret', name, version: third ?? '' };
    }
  }
  if (collection === 'deletedsecrets' && name !== '') {
    if (parts.length === 2 && method === 'GET') return { operation: 'GetDeletedSecret', name, version: '' };
    if (parts.length === 2 && method === 'DELETE')
      return { operation: 'PurgeDeletedSecret', name, version: '' };
    if (third === 'recover' && parts.length === 3 && method === 'POST')
      return { operation: 'RecoverDeletedSecret', name, version: '' };
  }
  return undefined;
}

function send(
  res: ServerResponse,
  status: number,
  body?: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'x-ms-keyvault-service-version': '1.9.0.0',
    ...headers,
  });
  res.end(text);
}

function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  innerCode?: string,
  headers: Record<string, string> = {},
): void {
  send(
    res,
    status,
    { error: { code, message, ...(innerCode === undefined ? {} : { innererror: { code: innerCode } }) } },
    headers,
  );
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function attributes(v: StoredVersion) {
  return {
    enabled: v.enabled,
    created: v.created,
    updated: v.updated,
    recoveryLevel: 'Recoverable+Purgeable',
    recoverableDays: 90,
  };
}

/**
 * Starts a protocol-faithful Azure Key Vault (secrets) test server on 127.0.0.1 over HTTPS with a
 * throwaway CA: the REST API of the SDK's api-version (checked), Key Vault's challenge-based bearer
 * authentication (401 with `WWW-Authenticate`, tokens from the identity stand-in on the same host,
 * audience checked), versions with their own tags/content type/enabled flag, soft delete, recover,
 * purge, the value size limit, fault injection (5xx, 429 with Retry-After, lost answers) and call counts.
 */
export async function startKeyVaultTestServer(
  options: KeyVaultTestServerOptions = {},
): Promise<KeyVaultTestServer> {
  const dir = await mkdtemp(join(tmpdir(), 'ps-akv-'));
  const pki = await generateTestPki(dir);
  const caFile = join(dir, 'ca.crt');
  const tokenFile = join(dir, 'federated-token');
  const tenantId = options.tenantId ?? '72f988bf-86f1-41af-91ab-2d7cd011db47';
  const clientId = options.clientId ?? '0f6a1b2c-3d4e-4f50-8a9b-c0d1e2f3a4b5';
  const assertion = `test-federated-token.${Date.now()}`;
  await writeFile(tokenFile, assertion);
  const identity = new IdentityStandIn({ tenantId, clientId, assertion });
  const state = new VaultState();
  const faults = new FaultInjector();
  const calls = new Map<Operation, number>(OPERATIONS.map((o) => [o, 0]));
  let challenges = 0;
  let writes = 0;
  let base = '';

  const handleVault = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const found = route(req.method ?? 'GET', url.pathname);
    if (found === undefined) return sendError(res, 404, 'NotFound', 'The requested resource was not found.');
    const auth = req.headers.authorization ?? '';
    const token = /^Bearer (\S+)$/.exec(auth)?.[1];
    if (token === undefined || identity.audienceOf(token) !== KEY_VAULT_RESOURCE) {
      challenges += 1;
      await readBody(req);
      return sendError(
        res,
        401,
        'Unauthorized',
        token === undefined
          ? 'AKV10000: Request is missing a Bearer or PoP token.'
          : 'AKV10022: Invalid audience.',
        undefined,
        {
          'www-authenticate': `Bearer authorization="${base}/${tenantId}", resource="${KEY_VAULT_RESOURCE}"`,
        },
      );
    }
    const apiVersion = url.searchParams.get('api-version') ?? '';
    if (!API_VERSIONS.includes(apiVersion)) {
      return sendError(
        res,
        400,
        'BadParameter',
        `The specified version (${apiVersion}) is not recognized. Consider using the latest supported version (2025-07-01).`,
      );
    }
    const text = await readBody(req);
    calls.set(found.operation, (calls.get(found.operation) ?? 0) + 1);
    const fault = faults.take(found.operation);
    let body: Record<string, unknown> = {};
    if (text !== '') {
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return sendError(res, 400, 'BadParameter', 'The request body is not valid JSON.');
      }
    }
    if (fault?.delayMs !== undefined) await sleep(fault.delayMs);
    const failing =
      fault !== undefined && (fault.status !== undefined || fault.drop === true) ? fault : undefined;
    if (failing !== undefined && failing.afterApply !== true) return answerFault(res, req, failing);
    let status = 200;
    let answer: unknown;
    try {
      answer = apply(found, body, url);
      if (WRITES.has(found.operation)) writes += 1;
      if (found.operation === 'PurgeDeletedSecret') status = 204;
    } catch (err) {
      if (err instanceof VaultError) return sendError(res, err.status, err.code, err.message, err.innerCode);
      throw err;
    }
    if (failing !== undefined) return answerFault(res, req, failing);
    return send(res, status, status === 204 ? undefined : answer);
  };

  const bundle = (name: string, v: StoredVersion, withValue: boolean, secret?: StoredSecret) => ({
    ...(withValue ? { value: v.value } : {}),
    id: `${base}/secrets/${name}/${v.id}`,
    attributes: attributes(v),
    ...(v.contentType === undefined ? {} : { contentType: v.contentType }),
    ...(v.tags === undefined ? {} : { tags: v.tags }),
    ...(secret?.deleted === undefined
      ? {}
      : {
          recoveryId: `${base}/deletedsecrets/${name}`,
          deletedDate: secret.deleted.deletedDate,
          scheduledPurgeDate: secret.deleted.scheduledPurgeDate,
        }),
  });

  const apply = (found: Route, body: Record<string, unknown>, url: URL): unknown => {
    const { name } = found;
    switch (found.operation) {
      case 'GetSecret':
        return bundle(name, state.read(name, found.version), true);
      case 'SetSecret':
        return bundle(name, state.set(name, body), true);
      case 'UpdateSecret':
        return bundle(name, state.update(name, found.version, body), false);
      case 'GetSecretVersions': {
        // No live secret of that name (never set, or soft-deleted): 200 with an empty page, not 404. Recorded
        // against the live service, test "can list secret versions (non existing)": https://github.com/Azure/
        // azure-sdk-for-js/blob/06235ea4278808b45f12a1a13df10d39d88445ce/sdk/keyvault/keyvault-secrets/recordings/
        // browsers/secret_client__list_secrets_in_various_ways/recording_can_list_secret_versions_non_existing.json
        // (a soft-deleted name is read the same way: its versions are not listed until it is recovered).
        const secret = state.liveOrUndefined(name);
        if (secret === undefined) return { value: [], nextLink: null };
        // Key Vault documents no order; this server lists by version id, so clients must sort.
        const all = [...secret.versions].sort((a, b) => a.id.localeCompare(b.id));
        const max = Math.min(25, Math.max(1, Number(url.searchParams.get('maxresults') ?? 25) || 25));
        const start = Number(url.searchParams.get('$skiptoken') ?? 0) || 0;
        const page = all.slice(start, start + max);
        const next =
          start + max < all.length
            ? `${base}/secrets/${name}/versions?api-version=${url.searchParams.get('api-version')}&$skiptoken=${start + max}&maxresults=${max}`
            : null;
        return { value: page.map((v) => bundle(name, v, false)), nextLink: next };
      }
      case 'DeleteSecret': {
        const secret = state.softDelete(name);
        return bundle(name, secret.versions.at(-1) as StoredVersion, false, secret);
      }
      case 'GetDeletedSecret': {
        const secret = state.deleted(name);
        return bundle(name, secret.versions.at(-1) as StoredVersion, false, secret);
      }
      case 'RecoverDeletedSecret': {
        const secret = state.recover(name);
        return bundle(name, secret.versions.at(-1) as StoredVersion, false);
      }
      case 'PurgeDeletedSecret':
        state.purge(name);
        return undefined;
    }
  };

  const answerFault = (res: ServerResponse, req: IncomingMessage, fault: FaultSpec): void => {
    if (fault.drop === true) {
      req.socket.destroy();
      return;
    }
    const status = fault.status ?? 503;
    const { code, message, innerCode } = faultBody(status);
    sendError(
      res,
      status,
      code,
      message,
      innerCode,
      fault.retryAfter === undefined ? {} : { 'retry-after': String(fault.retryAfter) },
    );
  };

  const handleIdentity = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    const prefix = `/${tenantId}`;
    if (!url.pathname.startsWith(`${prefix}/`)) return false;
    const rest = url.pathname.slice(prefix.length);
    if (req.method === 'GET' && rest === '/v2.0/.well-known/openid-configuration') {
      send(res, 200, identity.openIdConfiguration(base));
      return true;
    }
    if (req.method === 'POST' && rest === '/oauth2/v2.0/token') {
      const answer = identity.token(new URLSearchParams(await readBody(req)));
      send(res, answer.status, answer.body);
      return true;
    }
    return false;
  };

  const server: Server = createServer({ key: pki.keyPem, cert: pki.certPem }, (req, res) => {
    const url = new URL(req.url ?? '/', base);
    handleIdentity(req, res, url)
      .then((handled) => (handled ? undefined : handleVault(req, res, url)))
      .catch(() => {
        if (!res.headersSent) sendError(res, 500, 'InternalServerError', 'test server failure');
        else res.destroy();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  base = `https://127.0.0.1:${port}`;
  await writeFile(caFile, pki.caPem);

  return {
    url: base,
    tenantId,
    clientId,
    assertion,
    tokenFile,
    caPem: pki.caPem,
    caFile,
    state,
    identity,
    calls,
    get totalCalls() {
      return [...calls.values()].reduce((a, b) => a + b, 0);
    },
    get challenges() {
      return challenges;
    },
    get writes() {
      return writes;
    },
    injectFault: (spec) => faults.inject(spec),
    clearFaults: () => faults.clear(),
    env: () => ({
      AZURE_KEY_VAULT_URL: base,
      AZURE_KEY_VAULT_CA_FILE: caFile,
      AZURE_TENANT_ID: tenantId,
      AZURE_CLIENT_ID: clientId,
      AZURE_FEDERATED_TOKEN_FILE: tokenFile,
      AZURE_AUTHORITY_HOST: base,
    }),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
