import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { CERTIFICATES_PATH, DEFAULT_SOURCE_PATH, TRANSFERS_PATH } from '../../account-service/client.js';

const run = promisify(execFile);

/** Routes the stand-in serves. */
export type AccountRoute = 'transfers' | 'source' | 'certificates';

/** A self-signed entitlement certificate and its key (PEM), as the stand-in issues them. */
export interface StandInCertificate {
  cert: string;
  key: string;
}

/**
 * Issues a throwaway self-signed certificate with `openssl` (P-256, CN = the cluster id), valid for
 * `days` days, as the test PKI helper does. Not production code.
 *
 * @throws when `openssl` is missing or fails
 */
export async function issueSelfSignedCertificate(clusterId: string, days: number): Promise<StandInCertificate> {
  const dir = await mkdtemp(join(tmpdir(), 'entitlement-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    await run('openssl', ['req', '-x509', ...ec, '-keyout', keyFile, '-out', certFile, '-days', String(days), '-subj', `/CN=${clusterId}/O=stand-in-entitlement`]);
    return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One transfer as the stand-in keeps it (OCM `ClusterTransfer` fields that matter here). */
export interface StandInTransfer {
  id: string;
  clusterId: string;
  /** `accepted` is what the cluster looks for; others are kept and never listed by its search. */
  status: 'pending' | 'accepted' | 'completed' | 'declined';
  /** The new owner's pull secret JSON text. */
  secret: string;
}

/**
 * A fault answers the next `times` (default 1; `Infinity` until cleared) requests of a route
 * differently from the real service:
 * - `status`: an OCM error answer with that status (500, 503, 403, ...); 204 answers no content;
 * - `body` (+ `contentType`, default `text/html`): a raw body with status 200, e.g. a proxy page;
 * - `emptyBody`: status 200 with an empty body;
 * - `duplicate`: the cluster's accepted transfer listed twice (two ids);
 * - `emptySecret`: the accepted transfer listed with `secret: ""`.
 */
export interface AccountFault {
  route: AccountRoute | '*';
  status?: number;
  body?: string;
  contentType?: string;
  emptyBody?: boolean;
  duplicate?: boolean;
  emptySecret?: boolean;
  times?: number;
}

export interface AccountServiceStandInOptions {
  /** Loopback only: `127.0.0.1` (default), `::1` or `localhost`. */
  host?: string;
  port?: number;
  /** Bearer tokens accepted on the source route; unset: no authentication there. */
  tokens?: string[];
  /** Serve https with this certificate and key (PEM) instead of http. */
  tls?: { certPem: string; keyPem: string };
  /** Validity of the entitlement certificates it issues, in days (default 365). */
  certificateDays?: number;
}

export interface AccountServiceStandIn {
  /** `http[s]://127.0.0.1:{port}`: the client's `baseUrl`. */
  readonly url: string;
  /** Requests per route, counted on arrival (faulted ones too). */
  readonly calls: Readonly<Record<AccountRoute, number>>;
  /** The `cloud.openshift.com` token a cluster must present (`AccessToken {id}:{token}`). */
  setClusterToken(clusterId: string, token: string): void;
  addTransfer(transfer: StandInTransfer): void;
  /** Closes the window: removes the cluster's transfers. */
  clearTransfers(clusterId: string): void;
  setOrganizationPullSecret(organizationId: string, pullSecret: string): void;
  /** Makes the next certificate request of the cluster issue a new certificate (optionally with another validity). */
  rotateCertificate(clusterId: string, days?: number): void;
  /** The certificate currently issued to the cluster, if any (for tests' assertions and canaries). */
  issuedCertificate(clusterId: string): StandInCertificate | undefined;
  injectFault(fault: AccountFault): void;
  clearFaults(): void;
  resetCalls(): void;
  stop(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const SEARCH = /^cluster_uuid is '([^']+)' and status is 'accepted'$/;
const SOURCE = new RegExp(`^${DEFAULT_SOURCE_PATH.replace('{organization_id}', '([A-Za-z0-9_-]+)')}$`);

/** OCM's error body: `{kind: "Error", id, href, code, reason}`. */
function ocmError(res: ServerResponse, status: number, reason: string): void {
  const body = { kind: 'Error', id: String(status), href: `/api/accounts_mgmt/v1/errors/${status}`, code: `ACCT-MGMT-${status}`, reason };
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/**
 * Starts an account-service stand-in on loopback, modelled on OCM's `accounts_mgmt` v1: the
 * cluster-transfer search (`GET /api/accounts_mgmt/v1/cluster_transfers/?search=cluster_uuid is
 * '{id}' and status is 'accepted'`, authorized by `AccessToken {cluster-id}:{cloud.openshift.com
 * auth}`: 401 without it, 403 for another cluster or a wrong token) and an organization's pull
 * secret (bearer token). Fault injection and call counts are for tests and the dev stack. Not
 * production code.
 *
 * @throws Error for a non-loopback host or a port in use
 */
export async function startAccountServiceStandIn(options: AccountServiceStandInOptions = {}): Promise<AccountServiceStandIn> {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host)) throw new Error(`the account service stand-in listens on loopback only, not ${host}`);
  const clusterTokens = new Map<string, string>();
  const transfers: StandInTransfer[] = [];
  const orgSecrets = new Map<string, string>();
  let faults: { fault: AccountFault; remaining: number }[] = [];
  const calls: Record<AccountRoute, number> = { transfers: 0, source: 0, certificates: 0 };
  const certificates = new Map<string, StandInCertificate>();
  const certificateDays = new Map<string, number>();
  let bearer = options.tokens;

  function takeFault(route: AccountRoute): AccountFault | undefined {
    const entry = faults.find((f) => f.remaining > 0 && (f.fault.route === route || f.fault.route === '*'));
    if (entry === undefined) return undefined;
    entry.remaining -= 1;
    faults = faults.filter((f) => f.remaining > 0);
    return entry.fault;
  }

  /** Answers a fault that replaces the whole answer; true when it did. */
  function answerFault(res: ServerResponse, fault: AccountFault | undefined): boolean {
    if (fault?.status === 204) res.writeHead(204).end();
    else if (fault?.status !== undefined) ocmError(res, fault.status, `injected fault ${fault.status}`);
    else if (fault?.emptyBody === true) res.writeHead(200, { 'content-type': 'application/json' }).end();
    else if (fault?.body !== undefined) res.writeHead(200, { 'content-type': fault.contentType ?? 'text/html' }).end(fault.body);
    else return false;
    return true;
  }

  function serveTransfers(url: URL, req: IncomingMessage, res: ServerResponse): void {
    calls.transfers += 1;
    const match = SEARCH.exec(url.searchParams.get('search') ?? '');
    if (match === null) return ocmError(res, 400, "search must be: cluster_uuid is '<id>' and status is 'accepted'");
    const clusterId = match[1] ?? '';
    const auth = /^AccessToken ([^:\s]+):(\S+)$/.exec(req.headers.authorization ?? '');
    if (auth === null) return ocmError(res, 401, 'an AccessToken authorization is required');
    if (auth[1] !== clusterId || clusterTokens.get(clusterId) !== auth[2]) return ocmError(res, 403, 'the access token does not authorize this cluster');
    const fault = takeFault('transfers');
    if (answerFault(res, fault)) return;
    let items = transfers.filter((t) => t.clusterId === clusterId && t.status === 'accepted');
    const [first] = items;
    if (first !== undefined && fault?.duplicate === true) items = [first, { ...first, id: `${first.id}-dup` }];
    if (first !== undefined && fault?.emptySecret === true) items = [{ ...first, secret: '' }];
    const list = {
      kind: 'ClusterTransferList',
      page: 1,
      size: items.length,
      total: items.length,
      items: items.map((t) => ({ kind: 'ClusterTransfer', id: t.id, href: `${TRANSFERS_PATH}${t.id}`, cluster_uuid: t.clusterId, status: t.status, secret: t.secret })),
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(list));
  }

  function serveSource(organizationId: string, req: IncomingMessage, res: ServerResponse): void {
    calls.source += 1;
    if (bearer !== undefined) {
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (token === undefined) return ocmError(res, 401, 'a bearer token is required');
      if (!bearer.includes(token)) return ocmError(res, 403, 'the token is not authorized');
    }
    if (answerFault(res, takeFault('source'))) return;
    const secret = orgSecrets.get(organizationId);
    if (secret === undefined) return ocmError(res, 404, 'no such organization');
    res.writeHead(200, { 'content-type': 'application/json' }).end(secret);
  }

  async function serveCertificates(req: IncomingMessage, res: ServerResponse): Promise<void> {
    calls.certificates += 1;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return ocmError(res, 400, 'the body must be JSON');
    }
    const { type, arch } = (typeof body === 'object' && body !== null ? body : {}) as { type?: unknown; arch?: unknown };
    if (type !== 'sca' || typeof arch !== 'string' || arch === '') return ocmError(res, 400, 'the body must be {"type":"sca","arch":"<arch>"}');
    const auth = /^AccessToken ([^:\s]+):(\S+)$/.exec(req.headers.authorization ?? '');
    if (auth === null) return ocmError(res, 401, 'an AccessToken authorization is required');
    const clusterId = auth[1] ?? '';
    if (clusterTokens.get(clusterId) !== auth[2]) return ocmError(res, 403, 'the access token does not authorize this cluster');
    if (answerFault(res, takeFault('certificates'))) return;
    let issued = certificates.get(clusterId);
    if (issued === undefined) {
      try {
        issued = await issueSelfSignedCertificate(clusterId, certificateDays.get(clusterId) ?? options.certificateDays ?? 365);
      } catch {
        return ocmError(res, 500, 'the stand-in could not issue a certificate (is openssl installed?)');
      }
      certificates.set(clusterId, issued);
    }
    const expiration = new Date(new X509Certificate(issued.cert).validTo).toISOString();
    const answer = { cert: issued.cert, key: issued.key, metadata: { arch, type: 'sca' }, serial: { id: new X509Certificate(issued.cert).serialNumber, expiration } };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  }

  const listener: RequestListener = (req, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    if (req.method === 'POST' && url.pathname === CERTIFICATES_PATH) {
      serveCertificates(req, res).catch(() => ocmError(res, 500, 'internal error'));
      return;
    }
    req.resume();
    if (req.method !== 'GET') return ocmError(res, 405, 'only GET is served');
    if (url.pathname === TRANSFERS_PATH) return serveTransfers(url, req, res);
    const org = SOURCE.exec(url.pathname)?.[1];
    if (org !== undefined) return serveSource(org, req, res);
    ocmError(res, 404, 'no such route');
  };
  const server = options.tls === undefined ? createServer(listener) : createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `${options.tls === undefined ? 'http' : 'https'}://${shownHost}:${port}`,
    calls,
    setClusterToken: (clusterId, token) => void clusterTokens.set(clusterId, token),
    addTransfer: (transfer) => void transfers.push({ ...transfer }),
    clearTransfers: (clusterId) => {
      for (let i = transfers.length - 1; i >= 0; i--) if (transfers[i]?.clusterId === clusterId) transfers.splice(i, 1);
    },
    setOrganizationPullSecret: (organizationId, pullSecret) => void orgSecrets.set(organizationId, pullSecret),
    rotateCertificate: (clusterId, days) => {
      certificates.delete(clusterId);
      if (days !== undefined) certificateDays.set(clusterId, days);
    },
    issuedCertificate: (clusterId) => certificates.get(clusterId),
    injectFault: (fault) => void faults.push({ fault, remaining: fault.times ?? 1 }),
    clearFaults: () => {
      faults = [];
    },
    resetCalls: () => {
      calls.transfers = 0;
      calls.source = 0;
      calls.certificates = 0;
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      bearer = undefined;
    },
  };
}
