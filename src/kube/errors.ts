import { PullSecretError, trimServerText, type ErrorCode } from '../errors/index.js';
import { quoteIdentifier } from '../pullsecret/identifiers.js';
import { redactor } from '../pullsecret/redact.js';
import { errnoCode, isTransientFsError } from '../stores/local/fs-errors.js';

/**
 * Classification of Kubernetes client errors at the edge, into the `KUBE_*` family, so
 * an operator can tell Kubernetes RBAC from cloud IAM. Messages for API answers name the operation,
 * the object and the HTTP status / reason word; they never repeat the API server's message or the
 * request, which could quote Secret data. An error that never reached the server and that nothing
 * here recognises keeps its own message, redacted and trimmed.
 */

/** The parts of an API `Status` body worth acting on. */
interface ApiFailure {
  code: number;
  reason?: string;
  /** `details.kind` of the Status: `namespaces` in a 404 on create means the namespace is missing. */
  detailsKind?: string;
  /** Field paths from `details.causes` (never their messages). */
  fields: string[];
  /** `details.causes[].reason` (the cause type, e.g. `NamespaceTerminating`). */
  causeReasons: string[];
}

/**
 * The cause the NamespaceLifecycle admission plugin adds to its 403 on a create in a namespace being
 * deleted (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go).
 */
const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

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
    causeReasons: causes.map((c) => record(c)?.reason).filter((r): r is string => typeof r === 'string'),
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

const BY_STATUS: Readonly<Record<number, ErrorCode>> = {
  401: 'KUBE_UNAUTHENTICATED',
  403: 'KUBE_FORBIDDEN',
  404: 'KUBE_NOT_FOUND',
  409: 'KUBE_CONFLICT',
  429: 'KUBE_THROTTLED',
  504: 'KUBE_TIMEOUT',
};

function codeForStatus(status: number): ErrorCode {
  return BY_STATUS[status] ?? (status >= 500 ? 'KUBE_UNAVAILABLE' : 'KUBE_INVALID_REQUEST');
}

/** The cause's own message, redacted and trimmed, or its type when it has none. */
function causeText(err: unknown, name: string): string {
  const message = err instanceof Error ? err.message : typeof err === 'string' ? err : '';
  const text = trimServerText(redactor.redact(message));
  return text !== '' ? text : name !== '' ? name : typeof err;
}

/**
 * Turns anything the client throws into a PullSecretError: 401 → KUBE_UNAUTHENTICATED,
 * 403 → KUBE_FORBIDDEN (RBAC), except a create in a namespace being deleted → NAMESPACE_NOT_FOUND
 * (retryable; not an RBAC problem), 404 → KUBE_NOT_FOUND, 409 → KUBE_CONFLICT (retryable),
 * 429 → KUBE_THROTTLED (retryable), 504 and timeouts → KUBE_TIMEOUT (retryable), other 5xx and
 * socket errors → KUBE_UNAVAILABLE (retryable), other 4xx → KUBE_INVALID_REQUEST, TLS verification
 * failures → KUBE_TLS_FAILED, aborts → ABORTED, anything else → KUBE_FAILED with the cause's
 * message (redacted, trimmed).
 */
export function classifyKubeError(err: unknown, op: KubeOperation): PullSecretError {
  if (err instanceof PullSecretError) return err;
  const what = `${op.verb} of ${describeTarget(op)}`;
  const failure = apiFailure(err);
  if (failure !== undefined) {
    if (failure.code === 403 && failure.causeReasons.includes(NAMESPACE_TERMINATING_CAUSE)) {
      const going = `namespace ${quoteIdentifier(op.namespace)} is being deleted (Terminating)`;
      return new PullSecretError('NAMESPACE_NOT_FOUND', `Kubernetes API refused ${what}: ${going}`, {
        cause: err,
      });
    }
    const status = `HTTP ${failure.code}${failure.reason ? ` ${trimServerText(failure.reason, 40)}` : ''}`;
    const fields =
      failure.fields.length > 0
        ? ` (fields: ${failure.fields.map((f) => quoteIdentifier(f)).join(', ')})`
        : '';
    return new PullSecretError(
      codeForStatus(failure.code),
      `Kubernetes API refused ${what}: ${status}${fields}`,
      { cause: err },
    );
  }
  const e = record(err);
  const name = typeof e?.name === 'string' ? e.name : '';
  if (name === 'AbortError') return new PullSecretError('ABORTED', `${what} aborted`, { cause: err });
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (code !== undefined && TLS_CODES.test(code)) {
    return new PullSecretError(
      'KUBE_TLS_FAILED',
      `TLS verification of the Kubernetes API failed during ${what}: ${code}; check the cluster CA in the kubeconfig`,
      { cause: err },
    );
  }
  if (code !== undefined && TIMEOUT_CODES.has(code))
    return new PullSecretError('KUBE_TIMEOUT', `Kubernetes API timed out during ${what}: ${code}`, {
      cause: err,
    });
  if (name === 'FetchError' || code !== undefined) {
    return new PullSecretError(
      'KUBE_UNAVAILABLE',
      `Kubernetes API unreachable during ${what}: ${code ?? 'connection failed'}`,
      { cause: err },
    );
  }
  return new PullSecretError(
    'KUBE_FAILED',
    `Kubernetes client failed during ${what}: ${causeText(err, name)}`,
    { cause: err },
  );
}

/**
 * A filesystem error under the manifest directory: KUBE_UNAVAILABLE (retryable) for the conditions
 * that pass (a full disk, a quota, a busy device: the local store treats them alike), KUBE_FAILED
 * otherwise. Names the path and the errno code only.
 */
export function classifyManifestFsError(err: unknown, verb: string, path: string): PullSecretError {
  const code = errnoCode(err) ?? 'unknown error';
  const hint = code === 'ENOSPC' || code === 'EDQUOT' ? ' (no space left on the device; retried)' : '';
  const kind: ErrorCode = isTransientFsError(err) ? 'KUBE_UNAVAILABLE' : 'KUBE_FAILED';
  return new PullSecretError(kind, `cannot ${verb} manifest ${quoteIdentifier(path)}: ${code}${hint}`, {
    cause: err,
  });
}
