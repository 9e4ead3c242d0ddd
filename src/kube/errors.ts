import { PullSecretError } from '../errors/index.js';
import { quoteIdentifier } from '../pullsecret/identifiers.js';

/**
 * Classification of Kubernetes client errors at the edge (design §3). Messages name the operation,
 * the object and the HTTP status / reason word; they never repeat the API server's message or the
 * request, which could quote Secret data.
 */

/** The parts of an API `Status` body worth acting on. */
export interface ApiFailure {
  code: number;
  reason?: string;
  /** `details.kind` of the Status: `namespaces` in a 404 on create means the namespace is missing. */
  detailsKind?: string;
  /** Field paths from `details.causes` (never their messages). */
  fields: string[];
}

const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS|ALTNAME/;
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']);

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

/**
 * The HTTP failure carried by a client error (`ApiException` has `code` and the body as text), or
 * `undefined` when the request never got an answer.
 */
export function apiFailure(err: unknown): ApiFailure | undefined {
  const e = record(err);
  if (e === undefined || typeof e.code !== 'number') return undefined;
  let status: Record<string, unknown> | undefined;
  try {
    status = record(typeof e.body === 'string' ? JSON.parse(e.body) : e.body);
  } catch {
    status = undefined;
  }
  const details = record(status?.details);
  const causes = Array.isArray(details?.causes) ? details.causes : [];
  return {
    code: e.code,
    reason: typeof status?.reason === 'string' ? status.reason : undefined,
    detailsKind: typeof details?.kind === 'string' ? details.kind : undefined,
    fields: causes.map((c) => record(c)?.field).filter((f): f is string => typeof f === 'string'),
  };
}

/** What was being done, for the message: e.g. `update`, `Secret`, `clusters-x/x-pull-secret`. */
export interface KubeOperation {
  verb: string;
  kind: string;
  namespace: string;
  name: string;
}

function describeTarget(op: KubeOperation): string {
  return `${op.kind} ${quoteIdentifier(`${op.namespace}/${op.name}`)}`;
}

/**
 * Turns anything the client throws into a PullSecretError: 401 → STORE_UNAUTHENTICATED,
 * 403 → STORE_PERMISSION_DENIED, 400/422 → STORE_INVALID_REQUEST, 404 → SECRET_NOT_FOUND,
 * 409 → STORE_CONFLICT, 429 → STORE_QUOTA_EXCEEDED, 5xx and socket errors → STORE_UNAVAILABLE
 * (retryable), timeouts → STORE_TIMEOUT, TLS verification failures → STORE_FAILED (permanent),
 * aborts → ABORTED.
 */
export function classifyKubeError(err: unknown, op: KubeOperation): PullSecretError {
  if (err instanceof PullSecretError) return err;
  const what = `${op.verb} of ${describeTarget(op)}`;
  const failure = apiFailure(err);
  if (failure !== undefined) {
    const status = `HTTP ${failure.code}${failure.reason ? ` ${failure.reason}` : ''}`;
    const fields = failure.fields.length > 0 ? ` (fields: ${failure.fields.map((f) => quoteIdentifier(f)).join(', ')})` : '';
    const message = `Kubernetes API refused ${what}: ${status}${fields}`;
    const c = failure.code;
    if (c === 401) return new PullSecretError('STORE_UNAUTHENTICATED', message, { cause: err });
    if (c === 403) return new PullSecretError('STORE_PERMISSION_DENIED', message, { cause: err });
    if (c === 404) return new PullSecretError('SECRET_NOT_FOUND', message, { cause: err });
    if (c === 409) return new PullSecretError('STORE_CONFLICT', message, { cause: err });
    if (c === 429) return new PullSecretError('STORE_QUOTA_EXCEEDED', message, { cause: err });
    if (c === 504) return new PullSecretError('STORE_TIMEOUT', message, { cause: err });
    if (c >= 500) return new PullSecretError('STORE_UNAVAILABLE', message, { cause: err });
    return new PullSecretError('STORE_INVALID_REQUEST', message, { cause: err });
  }
  const e = record(err);
  const name = typeof e?.name === 'string' ? e.name : '';
  if (name === 'AbortError') return new PullSecretError('ABORTED', `${what} aborted`, { cause: err });
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (code !== undefined && TLS_CODES.test(code)) {
    return new PullSecretError('STORE_FAILED', `TLS verification of the Kubernetes API failed during ${what}: ${code}; check the cluster CA in the kubeconfig`, { cause: err });
  }
  if (code !== undefined && TIMEOUT_CODES.has(code)) return new PullSecretError('STORE_TIMEOUT', `Kubernetes API timed out during ${what}: ${code}`, { cause: err });
  if (name === 'FetchError' || code !== undefined) {
    return new PullSecretError('STORE_UNAVAILABLE', `Kubernetes API unreachable during ${what}: ${code ?? 'connection failed'}`, { cause: err });
  }
  return new PullSecretError('INTERNAL', `unexpected error during ${what}`, { cause: err });
}
