import { X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { PullSecretError, type ErrorCode } from '../errors/index.js';
import { readCaFile } from '../hyperfleet/client.js';
import {
  exchange,
  privateCaDispatcher,
  type ExchangeResponse,
  type ExchangeService,
} from '../hyperfleet/http-exchange.js';
import { describeIssues } from '../hyperfleet/schemas.js';
import { createTokenSource } from '../hyperfleet/token-source.js';
import { assertClusterId, quoteIdentifier } from '../pullsecret/identifiers.js';
import { redactor } from '../pullsecret/redact.js';
import { describeJsonProblem, parseStrictJson } from '../pullsecret/strict-json.js';
import { isObject } from '../pullsecret/validate.js';

/** The transfer route of OCM's `accounts_mgmt` v1 API, under the base URL. */
export const TRANSFERS_PATH = '/api/accounts_mgmt/v1/cluster_transfers/';

/** OCM's `accounts_mgmt` v1 route that answers the caller's own pull secret (`POST`, no body). */
export const ACCESS_TOKEN_PATH = '/api/accounts_mgmt/v1/access_token';
/** OCM's `accounts_mgmt` v1 route that answers an external resource's pull secret (`POST {external_resource_id}`). */
export const PULL_SECRETS_PATH = '/api/accounts_mgmt/v1/pull_secrets';

/** OCM's `accounts_mgmt` v1 route that issues a cluster's entitlement certificate (simple content access). */
export const CERTIFICATES_PATH = '/api/accounts_mgmt/v1/certificates';

const SERVICE: ExchangeService = { name: 'account service', caSetting: 'accountService.caFile' };
/** A transfer list or a pull secret is small; 1 MiB is the largest Kubernetes Secret. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

interface AccountServiceClientOptions {
  /** Origin (and optional prefix) of the account service, e.g. `https://api.openshift.com`. */
  baseUrl: string;
  /** The operator's bearer token file for `source` (re-read when it changes). Transfers use the cluster's own token. */
  tokenFile?: string;
  /** PEM CA file(s) for an https service; read once, at creation. */
  caFile?: string;
  /** Per request, in ms (default 10 000). */
  timeoutMs?: number;
}

/** One accepted transfer as the client hands it on: `secret` is the new owner's pull secret JSON text. */
interface AcceptedTransfer {
  id: string;
  /** The raw `secret` field; `''` or absent when the service sent none (the check calls that corrupted). */
  secret: string | undefined;
}

/** What the transfer list said: nothing open (204, empty body or no items), or the accepted items. */
export type TransferAnswer =
  { kind: 'none' } | { kind: 'accepted'; total: number; items: AcceptedTransfer[] };

/**
 * A cluster's entitlement certificate as the client hands it on: both PEMs as sent (`key` is a
 * credential, registered with the redactor by the caller for as long as it is handled) and the
 * expiry read from the certificate itself (`validTo` of the first certificate), not from metadata.
 */
export interface EntitlementCertificate {
  cert: string;
  key: string;
  expiresAt: Date;
  /** The serial number the service reported (`serial.id`), when any; informational. */
  serial?: string;
}

export interface AccountServiceClient {
  readonly baseUrl: string;
  /**
   * `POST /api/accounts_mgmt/v1/pull_secrets` with `{"external_resource_id": clusterId}` and the
   * operator's bearer token: the cluster's pull secret as OCM issues it for an external resource of
   * the operator's organization (201 `{auths}`; docs/account-service.md says why this route), as the
   * bytes the service sent (validate them like `spec.pullSecret.data` before use, and register
   * `credentialStrings` of them with the redactor for as long as they are handled).
   *
   * @throws IDENTIFIER_INVALID, CONFIG_INVALID (token file), ACCOUNT_SERVICE_UNAVAILABLE (retryable:
   *   408/429/5xx, timeout, network), ACCOUNT_SERVICE_REFUSED (other 4xx; the message names the
   *   status and OCM's code), ACCOUNT_SERVICE_UNEXPECTED (empty body), ABORTED
   */
  source(clusterId: string, signal?: AbortSignal): Promise<Buffer>;
  /**
   * `GET /api/accounts_mgmt/v1/cluster_transfers/?search=cluster_uuid is '{id}' and status is 'accepted'`
   * with `Authorization: AccessToken {clusterId}:{cloudToken}`. One attempt, no retry: the caller owns
   * the backoff (`transfer-check.ts`). `cloudToken` is never logged nor put in a message; it is
   * registered with the redactor during the request only. The items' `secret`s are credentials: the
   * caller registers them (`checkTransfer` does).
   *
   * @throws like `source`; ACCOUNT_SERVICE_UNEXPECTED for a body that is not the list its contract
   *   describes, or an item of another cluster or another status
   */
  transfers(clusterId: string, cloudToken: string, signal?: AbortSignal): Promise<TransferAnswer>;
  /**
   * `POST /api/accounts_mgmt/v1/certificates` with body `{"type":"sca","arch":arch}` and
   * `Authorization: AccessToken {clusterId}:{cloudToken}`: the cluster's simple-content-access
   * entitlement certificate. Answer (OCM-style): `{cert, key, metadata, serial: {id, expiration}}`;
   * `cert` and `key` must hold PEM blocks and `cert` must parse as X.509. One attempt; the caller owns
   * the backoff. The token and the answer's `key` are registered with the redactor during the request;
   * the caller registers `key` for as long as it keeps it.
   *
   * @throws like `transfers`; ACCOUNT_SERVICE_UNEXPECTED for an answer without both PEMs or with a
   *   certificate that does not parse
   */
  certificate(
    clusterId: string,
    cloudToken: string,
    arch: string,
    signal?: AbortSignal,
  ): Promise<EntitlementCertificate>;
}

const certificateSchema = z
  .object({
    cert: z.string(),
    key: z.string(),
    serial: z
      .object({ id: z.union([z.string(), z.number()]).optional() })
      .passthrough()
      .optional(),
  })
  .passthrough();
const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;
const PEM_KEY = /-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]+?-----END \1PRIVATE KEY-----/;
const ARCH = /^[a-z0-9_]{1,32}$/;

const itemSchema = z
  .object({
    id: z.string().min(1),
    cluster_uuid: z.string().optional(),
    status: z.string().optional(),
    secret: z.unknown(),
  })
  .passthrough();
const listSchema = z
  .object({
    page: z.number().int(),
    size: z.number().int(),
    total: z.number().int().nonnegative(),
    items: z.array(itemSchema),
  })
  .passthrough();

/**
 * Client of an account service modelled on OCM's `accounts_mgmt` v1, over the project's HTTP stack
 * (`hyperfleet/http-exchange.ts`: kept-alive connections, a timeout per request, a bounded body,
 * no redirects followed, https with a private CA).
 *
 * @throws CONFIG_INVALID at creation for a bad base URL, or a CA file that is unreadable or set for http
 */
export function createAccountServiceClient(options: AccountServiceClientOptions): AccountServiceClient {
  const baseUrl = normalizeOrigin(options.baseUrl);
  if (options.caFile !== undefined && !baseUrl.startsWith('https:')) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `an account service CA file is set, but ${baseUrl} is not an https URL`,
    );
  }
  const dispatcher =
    options.caFile === undefined ? undefined : privateCaDispatcher(readCaFile(options.caFile, SERVICE.name));
  const tokens = createTokenSource(options.tokenFile, SERVICE.name);
  const timeoutMs = options.timeoutMs ?? 10_000;

  async function get(
    path: string,
    operation: string,
    authorization: { token?: string; header?: string },
    signal: AbortSignal | undefined,
    post?: { body: unknown },
  ): Promise<ExchangeResponse> {
    try {
      return await exchange({
        method: post === undefined ? 'GET' : 'POST',
        body: post?.body,
        url: `${baseUrl}${path}`,
        operation,
        token: authorization.token,
        authorization: authorization.header,
        timeoutMs,
        signal,
        dispatcher,
        service: SERVICE,
        maxResponseBytes: MAX_RESPONSE_BYTES,
      });
    } catch (err) {
      // The exchange speaks in HyperFleet codes; the account service has its own family.
      if (
        err instanceof PullSecretError &&
        (err.code === 'API_UNAVAILABLE' || err.code === 'API_REQUEST_INVALID')
      ) {
        throw new PullSecretError(
          err.code === 'API_UNAVAILABLE' ? 'ACCOUNT_SERVICE_UNAVAILABLE' : 'ACCOUNT_SERVICE_UNEXPECTED',
          err.message,
          { cause: err },
        );
      }
      throw err;
    }
  }

  return {
    baseUrl,

    async source(clusterId, signal) {
      assertClusterId(clusterId);
      const operation = `POST ${PULL_SECRETS_PATH}`;
      const post = { body: { external_resource_id: clusterId } };
      const response = await get(PULL_SECRETS_PATH, operation, { token: await tokens.token() }, signal, post);
      if (response.status === 401) tokens.invalidate();
      // 201 is OCM's answer (ocm-api-model openapi accounts_mgmt/v1 `pull_secrets` post); 200 is accepted too.
      if (response.status !== 201 && response.status !== 200) throw errorForStatus(response, operation);
      if (response.text.trim() === '') throw unexpected(operation, 'empty body');
      return Buffer.from(response.text, 'utf8');
    },

    async transfers(clusterId, cloudToken, signal) {
      assertClusterId(clusterId);
      const operation = `GET ${TRANSFERS_PATH}?search`;
      const header = `AccessToken ${clusterId}:${cloudToken}`;
      // Masked while the request runs; released after, so a fleet's tokens do not pile up in the redactor.
      const release = redactor.register([cloudToken, header]);
      const search = encodeURIComponent(`cluster_uuid is '${clusterId}' and status is 'accepted'`);
      let response: ExchangeResponse;
      try {
        response = await get(`${TRANSFERS_PATH}?search=${search}`, operation, { header }, signal);
      } finally {
        release();
      }
      if (response.status === 204) return { kind: 'none' };
      if (response.status !== 200) throw errorForStatus(response, operation);
      if (response.text.trim() === '') return { kind: 'none' };
      return readList(response.text, clusterId, operation);
    },

    async certificate(clusterId, cloudToken, arch, signal) {
      assertClusterId(clusterId);
      if (!ARCH.test(arch))
        throw new PullSecretError(
          'CONFIG_INVALID',
          `invalid entitlement architecture ${quoteIdentifier(arch)}: 1-32 lowercase letters, digits or ` +
            `"_" (e.g. x86_64)`,
        );
      const operation = `POST ${CERTIFICATES_PATH}`;
      const header = `AccessToken ${clusterId}:${cloudToken}`;
      const release = redactor.register([cloudToken, header]);
      let response: ExchangeResponse;
      try {
        response = await get(CERTIFICATES_PATH, operation, { header }, signal, {
          body: { type: 'sca', arch },
        });
      } finally {
        release();
      }
      if (response.status !== 200 && response.status !== 201) throw errorForStatus(response, operation);
      // The answer holds a private key: masked while it is parsed, whatever goes wrong.
      const releaseAnswer = redactor.register(
        PEM_KEY.exec(response.text)?.[0]
          .split(/\r?\n/)
          .filter((line) => !line.startsWith('-----')) ?? [],
      );
      try {
        return readCertificate(response.text, operation);
      } finally {
        releaseAnswer();
      }
    },
  };
}

function readCertificate(text: string, operation: string): EntitlementCertificate {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) throw unexpected(operation, `body is ${describeJsonProblem(parsed.problem)}`);
  const answer = certificateSchema.safeParse(parsed.value);
  if (!answer.success) throw unexpected(operation, describeIssues(answer.error));
  const { cert, key, serial } = answer.data;
  if (!PEM_CERT.test(cert)) throw unexpected(operation, 'cert holds no PEM certificate block');
  if (!PEM_KEY.test(key)) throw unexpected(operation, 'key holds no PEM private key block');
  let validTo: string;
  try {
    validTo = new X509Certificate(cert).validTo;
  } catch {
    throw unexpected(operation, 'cert is not a parsable X.509 certificate');
  }
  const expiresAt = new Date(validTo);
  if (Number.isNaN(expiresAt.getTime()))
    throw unexpected(operation, 'the certificate has no readable expiry');
  return { cert, key, expiresAt, serial: serial?.id === undefined ? undefined : String(serial.id) };
}

function readList(text: string, clusterId: string, operation: string): TransferAnswer {
  const parsed = parseStrictJson(text);
  if (!parsed.ok) throw unexpected(operation, `body is ${describeJsonProblem(parsed.problem)}`);
  const list = listSchema.safeParse(parsed.value);
  if (!list.success) throw unexpected(operation, describeIssues(list.error));
  const { total, items } = list.data;
  if (items.length === 0) return { kind: 'none' };
  for (const item of items) {
    // The search asked for this cluster's accepted transfers; anything else must never be applied.
    if (item.cluster_uuid !== undefined && item.cluster_uuid !== clusterId)
      throw unexpected(operation, `transfer ${quoteIdentifier(item.id)} is for another cluster`);
    if (item.status !== undefined && item.status.toLowerCase() !== 'accepted')
      throw unexpected(
        operation,
        `transfer ${quoteIdentifier(item.id)} has status ${quoteIdentifier(item.status)}, not accepted`,
      );
  }
  const accepted = items.map((item) => ({
    id: item.id,
    secret: typeof item.secret === 'string' ? item.secret : undefined,
  }));
  return { kind: 'accepted', total, items: accepted };
}

function unexpected(operation: string, why: string): PullSecretError {
  return new PullSecretError(
    'ACCOUNT_SERVICE_UNEXPECTED',
    `unexpected answer from the account service (${operation}): ${why}`,
  );
}

/** 408/429/5xx → ACCOUNT_SERVICE_UNAVAILABLE (retryable); any other status → ACCOUNT_SERVICE_REFUSED naming it. */
function errorForStatus(response: ExchangeResponse, operation: string): PullSecretError {
  const { status } = response;
  // Only OCM's error code (`ACCT-MGMT-11`): free text from the server could echo what we sent.
  const serverCode =
    isObject(response.json) &&
    typeof response.json.code === 'string' &&
    /^[A-Z0-9-]{1,40}$/.test(response.json.code)
      ? response.json.code
      : undefined;
  const detail = serverCode === undefined ? '' : ` (${serverCode})`;
  const code: ErrorCode =
    status === 408 || status === 429 || status >= 500
      ? 'ACCOUNT_SERVICE_UNAVAILABLE'
      : 'ACCOUNT_SERVICE_REFUSED';
  const hint =
    status === 401 || status === 403
      ? ' (the credential was refused)'
      : status >= 300 && status < 400
        ? ' (redirects are not followed; configure the final URL)'
        : '';
  return new PullSecretError(code, `the account service answered ${status} to ${operation}${hint}${detail}`);
}

/** `{scheme}://{host}[:port][/prefix]` without a trailing slash. @throws CONFIG_INVALID */
function normalizeOrigin(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PullSecretError('CONFIG_INVALID', 'the account service base URL is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new PullSecretError(
      'CONFIG_INVALID',
      `the account service base URL must use http or https, not ${url.protocol}`,
    );
  if (url.username !== '' || url.password !== '')
    throw new PullSecretError(
      'CONFIG_INVALID',
      'the account service base URL must not embed credentials; use the token file',
    );
  if (url.search !== '' || url.hash !== '')
    throw new PullSecretError(
      'CONFIG_INVALID',
      'the account service base URL must not have a query or a fragment',
    );
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
